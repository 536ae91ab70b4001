"""A fake KFD: the kernel side of `kfd.Driver` for two GPUs (gfx1100; gfx942, one XCC), in the memory of this process.

Nothing here touches the real /dev or /sys. GPU memory is host memory of this process at the address KFD would give it
(one virtual address space for the CPU and the GPUs), so the engines executing the rings (runtime/amd/mock_gpu.py, built
by `engine_factory` when a queue is created) read and write it with ctypes.

- Files: a fake sysfs (topology nodes 0 = the CPU, 1 = gfx1100, 2 = gfx942 with `gpu_id` and `properties`, one "key
  value" per line; ip_discovery versions of GC, SDMA0 and NBIF under /sys/class/drm/renderD<minor>), /dev/kfd and the
  two render nodes. `open` gives fake descriptors (>= 1 << 30); any other path raises FileNotFoundError.
- ioctls (on a /dev/kfd descriptor only) check their arguments as the kernel does and fail with a `KFDError` naming the
  field (EINVAL mostly; ENODEV/ESRCH for a GPU whose VM was not acquired, ENOMEM beyond the GPU's VRAM, EBUSY to free
  mapped memory, EPERM to free the event page). Handles are (gpu_id << 32) | n, as KFD makes them.
- Memory: the caller reserves [va, va + size) with an anonymous PROT_NONE mapping (through this driver's `mmap`, which
  records it); ALLOC_MEMORY_OF_GPU of VRAM or GTT must lie inside such a reservation, and backs it at once with
  readable, writable anonymous memory (MAP_FIXED over the reservation); the caller's later `mmap(va, size, ...,
  MAP_FIXED, render fd, mmap_offset)` validates and returns va. USERPTR memory is the caller's (mmap_offset == va_addr,
  already mapped) and used as is. GPU memory stays accessible while any GPU maps it: `munmap` of a live allocation's
  range only records that the caller let it go; FREE_MEMORY_OF_GPU then releases it (or gives the caller back its
  PROT_NONE reservation when it never mapped the memory and has not unmapped it; memory the caller still maps outlives
  FREE, as a BO kept alive by its CPU mapping does). UNMAP_MEMORY_FROM_GPU of memory a live queue uses is refused
  (EBUSY): its engine could still touch it.
- Events: the first CREATE_EVENT registers the event page (a GTT allocation of >= 0x8000 bytes, by handle); event ids
  count from 1; a signal event's slot index is its id (its mailbox: event page + 8 * slot, set to ~0 at creation).
  WAIT_EVENTS blocks until the events fire (`MockGPU.signal_event`, `MockGPU.memory_fault`) or the timeout passes;
  auto-reset events are consumed by the waits they wake, as in the kernel. A memory fault fires every memory event of
  the process (KFD does the same; the data names the GPU) with the faulting page's address.
- Queues: PM4 compute and SDMA (not AQL). The doorbell page of a GPU (DOORBELLS_SIZE bytes of host memory) is what
  `mmap(0, DOORBELLS_SIZE, ..., kfd fd, doorbell_offset & ~0x1FFF)` returns; `write_doorbell` on a queue's doorbell
  stores the value and calls its engine's `kick()`. DESTROY_QUEUE calls `stop()`. Engines are called without the
  driver's lock held.
"""

from __future__ import annotations

import bisect
import ctypes
import errno
import importlib
import os
import posixpath
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from pytc.runtime.amd import kfd
from pytc.runtime.amd.kfd import KFDError

PAGE = os.sysconf("SC_PAGE_SIZE")
FIRST_FD = 1 << 30
ENGINE_MODULE = "pytc.runtime.amd.mock_gpu"
UNSIGNALED = (1 << 64) - 1  # an event mailbox slot nobody wrote
# render-node mmap offsets of VRAM and GTT allocations start here (past the first 4 GiB, as DRM's do)
TOKEN_BASE = 1 << 32

# (node, gpu_id, properties, ip_discovery versions of GC, SDMA0, NBIF); every value an integer, as in KFD's topology
CPU_PROPERTIES = {
  "cpu_cores_count": 16,
  "simd_count": 0,
  "mem_banks_count": 1,
  "caches_count": 0,
  "io_links_count": 2,
  "cpu_core_id_base": 0,
  "max_waves_per_simd": 0,
  "lds_size_in_kb": 0,
  "wave_front_size": 0,
  "array_count": 0,
  "gfx_target_version": 0,
  "vendor_id": 0,
  "device_id": 0,
  "drm_render_minor": 0,
  "local_mem_size": 0,
  "num_xcc": 0,
}
GPU_TABLE = (
  (
    1,
    0x2F7A,
    {
      "cpu_cores_count": 0,
      "simd_count": 192,
      "mem_banks_count": 1,
      "caches_count": 0,
      "io_links_count": 1,
      "simd_id_base": 0x80002000,
      "max_waves_per_simd": 16,
      "lds_size_in_kb": 64,
      "gds_size_in_kb": 0,
      "num_gws": 64,
      "wave_front_size": 32,
      "array_count": 12,
      "simd_arrays_per_engine": 2,
      "cu_per_simd_array": 8,
      "simd_per_cu": 2,
      "max_slots_scratch_cu": 32,
      "gfx_target_version": 110000,
      "vendor_id": 0x1002,
      "device_id": 0x744C,
      "location_id": 0x0300,
      "domain": 0,
      "drm_render_minor": 129,
      "hive_id": 0,
      "num_sdma_engines": 2,
      "num_sdma_xgmi_engines": 0,
      "num_sdma_queues_per_engine": 6,
      "num_cp_queues": 24,
      "max_engine_clk_fcompute": 2500,
      "local_mem_size": 24 << 30,
      "num_xcc": 1,
    },
    {kfd.GC_HWID: (11, 0, 0), kfd.SDMA0_HWID: (6, 0, 0), kfd.NBIF_HWID: (4, 3, 0)},
  ),
  (
    2,
    0x8C4D,
    {
      "cpu_cores_count": 0,
      "simd_count": 152,
      "mem_banks_count": 1,
      "caches_count": 0,
      "io_links_count": 1,
      "simd_id_base": 0x80001000,
      "max_waves_per_simd": 8,
      "lds_size_in_kb": 64,
      "gds_size_in_kb": 0,
      "num_gws": 64,
      "wave_front_size": 64,
      "array_count": 4,
      "simd_arrays_per_engine": 1,
      "cu_per_simd_array": 10,
      "simd_per_cu": 4,
      "max_slots_scratch_cu": 32,
      "gfx_target_version": 90402,
      "vendor_id": 0x1002,
      "device_id": 0x74A1,
      "location_id": 0x0C00,
      "domain": 0,
      "drm_render_minor": 128,
      "hive_id": 0,
      "num_sdma_engines": 2,
      "num_sdma_xgmi_engines": 6,
      "num_sdma_queues_per_engine": 8,
      "num_cp_queues": 24,
      "max_engine_clk_fcompute": 2100,
      "local_mem_size": 8 << 30,
      "num_xcc": 1,
    },
    {kfd.GC_HWID: (9, 4, 2), kfd.SDMA0_HWID: (4, 4, 2), kfd.NBIF_HWID: (7, 9, 0)},
  ),
)


def arch_name(version: int) -> str:
  """gfx_target_version (major*10000 + minor*100 + stepping) -> the processor name (minor and stepping in hex): 90402 ->
  gfx942."""
  return f"gfx{version // 10000}{version // 100 % 100:x}{version % 100:x}"


def properties_text(properties: dict[str, int]) -> str:
  return "".join(f"{key} {value}\n" for key, value in properties.items())


def ids_text(gpu_ids: set[int]) -> str:
  return ", ".join(hex(g) for g in sorted(gpu_ids))


class Ranges:
  """Disjoint [start, end) address ranges, merged where they touch. Changes replace `spans` whole, so readers need no
  lock."""

  def __init__(self):
    self.spans: tuple[tuple[int, int], ...] = ()

  def add(self, start: int, end: int) -> None:
    kept = [(s, e) for s, e in self.spans if e < start or s > end]
    merged = [(s, e) for s, e in self.spans if not (e < start or s > end)]
    self.spans = tuple(sorted(kept + [(min([start] + [s for s, _ in merged]), max([end] + [e for _, e in merged]))]))

  def remove(self, start: int, end: int) -> None:
    pieces = [(s, e) for s, e in self.spans if e <= start or s >= end]
    for s, e in self.spans:
      if s < end and e > start:
        pieces += [p for p in ((s, start), (end, e)) if p[0] < p[1]]
    self.spans = tuple(sorted(pieces))

  def covers(self, start: int, end: int) -> bool:
    """Whether every address of [start, end) is in a range (an empty range is)."""
    if end <= start:
      return True
    spans = self.spans
    i = bisect.bisect_right(spans, start, key=lambda span: span[0]) - 1
    return i >= 0 and spans[i][0] <= start and end <= spans[i][1]

  def overlaps(self, start: int, end: int) -> bool:
    return any(s < end and e > start for s, e in self.spans)


class Engine(Protocol):
  """What executes a queue's ring: `kick` after each doorbell write, `stop` when the queue is destroyed."""

  def kick(self) -> None: ...
  def stop(self) -> None: ...


@dataclass(eq=False)
class MockQueue:
  """A created queue as its engine sees it: addresses of the ring, the read and write pointers (u64), the EOP buffer (0
  for SDMA) and the doorbell (u64). `kind` is kfd.QUEUE_COMPUTE (PM4) or kfd.QUEUE_SDMA."""

  gpu: MockGPU
  queue_id: int
  kind: int
  ring: int
  ring_size: int
  read_pointer: int
  write_pointer: int
  eop: int
  doorbell: int


@dataclass(eq=False)
class Allocation:
  """A live KFD allocation: `gpus` it is mapped to; `cpu_view` once the caller mapped it from the render node;
  `released` once the caller unmapped its range (the memory stays until FREE)."""

  handle: int
  gpu: MockGPU
  address: int
  size: int
  flags: int
  token: int
  gpus: set[int] = field(default_factory=set)
  cpu_view: bool = False
  released: bool = False

  @property
  def kind(self) -> int:
    return self.flags & (kfd.VRAM | kfd.GTT | kfd.USERPTR)


@dataclass(eq=False)
class Event:
  event_id: int
  event_type: int
  auto_reset: bool
  slot: int
  triggered: bool = False
  waiters: list[Waiter] = field(default_factory=list)
  data: kfd.EventDataUnion = field(default_factory=kfd.EventDataUnion)


@dataclass(eq=False)
class Waiter:
  """One WAIT_EVENTS call asleep: the ids of its events that fired for it."""

  fired: set[int] = field(default_factory=set)


class MockGPU:
  """One GPU of the mock (a topology node), and the services its engines call."""

  def __init__(
    self, driver: MockDriver, node: int, gpu_id: int, properties: dict[str, int], ip: dict[int, tuple[int, int, int]]
  ):
    self.driver, self.node, self.gpu_id, self.properties, self.ip = driver, node, gpu_id, properties, ip
    self.arch = arch_name(properties["gfx_target_version"])
    self.emulations: dict[int, object] = {}
    self.faults: list[tuple[int, str]] = []
    self.ranges = Ranges()  # memory mapped to this GPU
    self.vm_fd: int | None = None  # the render node descriptor ACQUIRE_VM tied to this GPU
    self.vram_used = 0
    self.doorbell_page: int | None = (
      None  # DOORBELLS_SIZE bytes of host memory, made at the first queue or doorbell mmap
    )
    self.doorbell_slots: dict[int, int] = {}  # slot -> queue id

  def __repr__(self) -> str:
    return f"MockGPU(node={self.node}, gpu_id={self.gpu_id:#x}, arch={self.arch})"

  def mapped(self, address: int, nbytes: int) -> bool:
    """Whether every byte of [address, address + nbytes) is memory mapped to this GPU (MAP_MEMORY_TO_GPU)."""
    return self.ranges.covers(address, address + nbytes)

  def signal_event(self, event_id: int) -> None:
    """The GPU's interrupt for `event_id` (a RELEASE_MEM or SDMA TRAP with that context id): the event fires and wakes
    the WAIT_EVENTS waiting on it. An id that is no event is ignored, as the kernel does."""
    with self.driver.cond:
      if (event := self.driver.events.get(event_id)) is not None:
        self.driver.fire(event)

  def memory_fault(self, address: int, reason: str) -> None:
    """A page fault of this GPU at `address`: recorded in `faults`, and every memory event fires with this GPU's id, the
    faulting page and failure_not_present set."""
    with self.driver.cond:
      self.faults.append((address, reason))
      data = kfd.MemoryExceptionData(failure_not_present=1, va=address & ~(PAGE - 1), gpu_id=self.gpu_id)
      for event in self.driver.events.values():
        if event.event_type == kfd.EVENT_MEMORY:
          event.data.memory_exception_data = data
          self.driver.fire(event)

  def hardware_exception(self, reason: str) -> None:
    """A wave trapped (an instruction the MOCK cannot execute): recorded in `faults` (address 0), and every
    hardware-exception event fires with this GPU's id, as KFD reports a GPU that needs a reset."""
    with self.driver.cond:
      self.faults.append((0, reason))
      data = kfd.HwExceptionData(reset_type=1, reset_cause=1, memory_lost=0, gpu_id=self.gpu_id)
      for event in self.driver.events.values():
        if event.event_type == kfd.EVENT_HW_EXCEPTION:
          event.data.hw_exception_data = data
          self.driver.fire(event)


class MockDriver(kfd.Driver):
  """The fake kernel. `engine_factory(queue)` makes the engine of each created queue (default: `engine` of
  pytc.runtime.amd.mock_gpu, imported at the first CREATE_QUEUE; ENOSYS when that module is missing)."""

  def __init__(self, engine_factory: Callable[[MockQueue], Engine] | None = None):
    self.engine_factory = engine_factory
    self.cond = threading.Condition(threading.RLock())
    self.gpus: dict[int, MockGPU] = {}
    self.files: dict[str, str] = {}
    topology = kfd.TOPOLOGY
    self.files[f"{topology}/0/gpu_id"], self.files[f"{topology}/0/name"] = "0\n", "Mock CPU\n"
    self.files[f"{topology}/0/properties"] = properties_text(CPU_PROPERTIES)
    self.files[f"{topology}/0/mem_banks/0/properties"] = properties_text(
      {"heap_type": 0, "size_in_bytes": 64 << 30, "flags": 0, "width": 64}
    )
    self.devices: dict[str, MockGPU | None] = {kfd.KFD_PATH: None}
    for node, gpu_id, properties, ip in GPU_TABLE:
      gpu = self.gpus[gpu_id] = MockGPU(self, node, gpu_id, dict(properties), dict(ip))
      minor = properties["drm_render_minor"]
      self.files[f"{topology}/{node}/gpu_id"], self.files[f"{topology}/{node}/name"] = f"{gpu_id}\n", f"{gpu.arch}\n"
      self.files[f"{topology}/{node}/properties"] = properties_text(properties)
      self.files[f"{topology}/{node}/mem_banks/0/properties"] = properties_text(
        {"heap_type": 1, "size_in_bytes": properties["local_mem_size"], "flags": 0, "width": 4096}
      )
      for hw_id, version in ip.items():
        for name, number in zip(("major", "minor", "revision"), version):
          self.files[f"{kfd.IP_DISCOVERY.format(minor=minor, hw_id=hw_id)}/{name}"] = f"{number}\n"
      self.devices[kfd.RENDER_PATH.format(minor=minor)] = gpu
    self.dirs: dict[str, set[str]] = {}
    for path in [*self.files, *self.devices]:
      while path != "/":
        parent, name = posixpath.split(path)
        self.dirs.setdefault(parent, set()).add(name)
        path = parent
    self.fds: dict[int, str] = {}
    self.next_fd = FIRST_FD
    self.reservations = Ranges()  # anonymous PROT_NONE mappings made through `mmap`
    self.allocations: dict[int, Allocation] = {}
    self.tokens: dict[int, Allocation] = {}
    self.next_handle, self.next_token = 1, TOKEN_BASE
    self.events: dict[int, Event] = {}
    self.event_page: Allocation | None = None
    self.next_event_id = 1
    self.queues: dict[int, tuple[MockQueue, Engine | None]] = {}
    self.doorbells: dict[int, Engine] = {}  # doorbell address -> the engine behind it
    self.doorbell_pages: set[int] = set()

  # ***** files *****

  def _file(self, path: str) -> str:
    if (text := self.files.get(posixpath.normpath(path))) is None:
      raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
    return text

  def read_text(self, path: str) -> str:
    if posixpath.normpath(path) in self.dirs:
      raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    return self._file(path)

  def listdir(self, path: str) -> list[str]:
    if (names := self.dirs.get(posixpath.normpath(path))) is None:
      if self.exists(path):
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), path)
      raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
    return sorted(names)

  def exists(self, path: str) -> bool:
    path = posixpath.normpath(path)
    return path in self.files or path in self.dirs or path in self.devices

  def open(self, path: str) -> int:
    if (path := posixpath.normpath(path)) not in self.devices:
      raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
    with self.cond:
      fd, self.next_fd = self.next_fd, self.next_fd + 1
      self.fds[fd] = path
      return fd

  def close(self, fd: int) -> None:
    with self.cond:
      if self.fds.pop(fd, None) is None:
        raise KFDError(errno.EBADF, f"close: fd {fd} is not open")

  # ***** ioctls *****

  def ioctl(self, fd: int, name: str, args: ctypes.Structure) -> None:
    kfd.check_args(name, args)
    if (path := self.fds.get(fd)) is None:
      raise KFDError(errno.EBADF, f"{name}: fd {fd} is not open")
    if path != kfd.KFD_PATH:
      raise KFDError(errno.ENOTTY, f"{name}: fd {fd} is {path}, not {kfd.KFD_PATH}")
    getattr(self, f"_{name.lower()}")(args)

  def _gpu(self, gpu_id: int, call: str, field_name: str = "gpu_id") -> MockGPU:
    if (gpu := self.gpus.get(gpu_id)) is None:
      raise KFDError(
        errno.EINVAL, f"{call}: {field_name} {gpu_id:#x} is no GPU (known: {', '.join(hex(g) for g in self.gpus)})"
      )
    return gpu

  def _get_version(self, args: kfd.GetVersionArgs) -> None:
    args.major_version, args.minor_version = 1, 14

  def _runtime_enable(self, args: kfd.RuntimeEnableArgs) -> None:
    pass

  def _acquire_vm(self, args: kfd.AcquireVMArgs) -> None:
    with self.cond:
      gpu = self._gpu(args.gpu_id, "ACQUIRE_VM")
      if (path := self.fds.get(args.drm_fd)) is None:
        raise KFDError(errno.EINVAL, f"ACQUIRE_VM: drm_fd {args.drm_fd} is not open")
      if self.devices.get(path) is not gpu:
        raise KFDError(
          errno.EINVAL, f"ACQUIRE_VM: drm_fd {args.drm_fd} is {path}, not the render node of gpu_id {gpu.gpu_id:#x}"
        )
      if gpu.vm_fd is not None and gpu.vm_fd != args.drm_fd:
        raise KFDError(errno.EBUSY, f"ACQUIRE_VM: gpu_id {gpu.gpu_id:#x} already has the VM of drm_fd {gpu.vm_fd}")
      gpu.vm_fd = args.drm_fd

  def _bound(self, gpu: MockGPU, call: str, err: int = errno.ENODEV) -> MockGPU:
    if gpu.vm_fd is None:
      raise KFDError(err, f"{call}: gpu_id {gpu.gpu_id:#x} has no VM yet (ACQUIRE_VM first)")
    return gpu

  def _alloc_memory_of_gpu(self, args: kfd.AllocMemoryArgs) -> None:
    call, va, size = "ALLOC_MEMORY_OF_GPU", args.va_addr, args.size
    with self.cond:
      gpu = self._bound(self._gpu(args.gpu_id, call), call)
      kind = args.flags & (kfd.VRAM | kfd.GTT | kfd.USERPTR | kfd.DOORBELL | kfd.MMIO_REMAP)
      if kind in (kfd.DOORBELL, kfd.MMIO_REMAP):
        raise KFDError(
          errno.EINVAL, f"{call}: flags {args.flags:#x}: DOORBELL and MMIO_REMAP memory are not supported by the mock"
        )
      if kind not in (kfd.VRAM, kfd.GTT, kfd.USERPTR):
        raise KFDError(errno.EINVAL, f"{call}: flags {args.flags:#x} must name exactly one of VRAM, GTT, USERPTR")
      if size == 0 or size % PAGE:
        raise KFDError(errno.EINVAL, f"{call}: size {size:#x} is not a positive multiple of the page size {PAGE:#x}")
      if va == 0 or va % PAGE:
        raise KFDError(errno.EINVAL, f"{call}: va_addr {va:#x} is not a nonzero page-aligned address")
      if clash := next(
        (a for a in self.allocations.values() if a.address < va + size and va < a.address + a.size), None
      ):
        raise KFDError(
          errno.EINVAL,
          f"{call}: [{va:#x}, {va + size:#x}) overlaps the allocation at {clash.address:#x} ({clash.size:#x} bytes)",
        )
      token = args.mmap_offset
      if kind == kfd.USERPTR:
        if args.mmap_offset != va:
          raise KFDError(
            errno.EINVAL, f"{call}: USERPTR mmap_offset {args.mmap_offset:#x} must equal va_addr {va:#x} in the mock"
          )
        if self.reservations.overlaps(va, va + size) or not kfd.is_mapped(va, size):
          raise KFDError(
            errno.EFAULT, f"{call}: USERPTR memory [{va:#x}, {va + size:#x}) is not accessible memory of this process"
          )
      else:
        if not self.reservations.covers(va, va + size):
          raise KFDError(
            errno.EINVAL,
            f"{call}: [{va:#x}, {va + size:#x}) is not inside a PROT_NONE reservation made with this driver's mmap",
          )
        if kind == kfd.VRAM and gpu.vram_used + size > gpu.properties["local_mem_size"]:
          raise KFDError(
            errno.ENOMEM,
            f"{call}: {size:#x} bytes of VRAM do not fit gpu_id {gpu.gpu_id:#x} "
            f"({gpu.vram_used:#x} of {gpu.properties['local_mem_size']:#x} in use)",
          )
        kfd.libc_mmap(
          va,
          size,
          kfd.PROT_READ | kfd.PROT_WRITE,
          kfd.MAP_PRIVATE | kfd.MAP_ANONYMOUS | kfd.MAP_FIXED | kfd.MAP_NORESERVE,
          -1,
          0,
        )
        self.reservations.remove(va, va + size)
        token, self.next_token = self.next_token, self.next_token + size
        if kind == kfd.VRAM:
          gpu.vram_used += size
      handle, self.next_handle = gpu.gpu_id << 32 | self.next_handle, self.next_handle + 1
      self.allocations[handle] = allocation = Allocation(handle, gpu, va, size, args.flags, token)
      if kind != kfd.USERPTR:
        self.tokens[token] = allocation
      args.handle, args.mmap_offset = handle, token

  def _allocation(self, handle: int, call: str, missing: int = errno.EINVAL) -> Allocation:
    self._gpu(handle >> 32, call, "handle's gpu_id")
    if (allocation := self.allocations.get(handle)) is None:
      raise KFDError(missing, f"{call}: handle {handle:#x} is no live allocation")
    return allocation

  def _free_memory_of_gpu(self, args: kfd.FreeMemoryArgs) -> None:
    call = "FREE_MEMORY_OF_GPU"
    with self.cond:
      allocation = self._allocation(args.handle, call)
      if allocation is self.event_page:
        raise KFDError(errno.EPERM, f"{call}: handle {args.handle:#x} is the event page, kept for the process's life")
      if allocation.gpus:
        raise KFDError(
          errno.EBUSY, f"{call}: handle {args.handle:#x} is still mapped to gpu_ids {ids_text(allocation.gpus)}"
        )
      del self.allocations[args.handle]
      self.tokens.pop(allocation.token, None)
      if allocation.kind == kfd.USERPTR:
        return
      if allocation.kind == kfd.VRAM:
        allocation.gpu.vram_used -= allocation.size
      start, end = allocation.address, allocation.address + allocation.size
      if allocation.released:
        kfd.libc_munmap(start, allocation.size)
      elif not allocation.cpu_view:
        kfd.libc_mmap(
          start,
          allocation.size,
          kfd.PROT_NONE,
          kfd.MAP_PRIVATE | kfd.MAP_ANONYMOUS | kfd.MAP_FIXED | kfd.MAP_NORESERVE,
          -1,
          0,
        )
        self.reservations.add(start, end)

  def _map_args(self, args: kfd.MapMemoryArgs, call: str) -> tuple[Allocation, ctypes.Array]:
    self._gpu(args.handle >> 32, call, "handle's gpu_id")
    if args.n_devices == 0:
      raise KFDError(errno.EINVAL, f"{call}: n_devices is 0")
    if args.n_success > args.n_devices:
      raise KFDError(errno.EINVAL, f"{call}: n_success {args.n_success} exceeds n_devices {args.n_devices}")
    if args.device_ids_array_ptr == 0:
      raise KFDError(errno.EFAULT, f"{call}: device_ids_array_ptr is NULL")
    return self._allocation(args.handle, call, errno.ENOMEM), (ctypes.c_uint32 * args.n_devices).from_address(
      args.device_ids_array_ptr
    )

  def _map_memory_to_gpu(self, args: kfd.MapMemoryArgs) -> None:
    call = "MAP_MEMORY_TO_GPU"
    with self.cond:
      allocation, ids = self._map_args(args, call)
      for i in range(args.n_success, args.n_devices):
        gpu = self._bound(self._gpu(ids[i], call, f"device_ids_array_ptr[{i}]"), call)
        if gpu.gpu_id not in allocation.gpus:
          gpu.ranges.add(allocation.address, allocation.address + allocation.size)
          allocation.gpus.add(gpu.gpu_id)
        args.n_success = i + 1

  def _unmap_memory_from_gpu(self, args: kfd.MapMemoryArgs) -> None:
    call = "UNMAP_MEMORY_FROM_GPU"
    with self.cond:
      allocation, ids = self._map_args(args, call)
      start, end = allocation.address, allocation.address + allocation.size
      for i in range(args.n_success, args.n_devices):
        gpu = self._gpu(ids[i], call, f"device_ids_array_ptr[{i}]")
        if gpu.gpu_id in allocation.gpus:
          if user := next(
            (
              q
              for q, _ in self.queues.values()
              if q.gpu is gpu and any(start <= a < end for a in self._queue_memory(q))
            ),
            None,
          ):
            raise KFDError(
              errno.EBUSY,
              f"{call}: handle {args.handle:#x} holds buffers of queue {user.queue_id} on gpu_id {gpu.gpu_id:#x} "
              "(destroy the queue first)",
            )
          gpu.ranges.remove(start, end)
          allocation.gpus.discard(gpu.gpu_id)
        args.n_success = i + 1

  # ***** events *****

  def fire(self, event: Event) -> None:
    """`event` fires: the waits sleeping on it wake; an auto-reset event that woke a wait is consumed by it, any other
    stays signaled until a wait consumes it (auto-reset) or forever."""
    with self.cond:
      for waiter in event.waiters:
        waiter.fired.add(event.event_id)
      event.triggered = not (event.auto_reset and event.waiters)
      self.cond.notify_all()

  def _create_event(self, args: kfd.CreateEventArgs) -> None:
    call = "CREATE_EVENT"
    with self.cond:
      if args.event_page_offset:
        if self.event_page is not None:
          raise KFDError(errno.EINVAL, f"{call}: the event page is already set (event_page_offset must be 0)")
        page = self._allocation(args.event_page_offset, call)
        if page.kind != kfd.GTT or page.size < kfd.EVENT_PAGE_SIZE:
          raise KFDError(
            errno.EINVAL,
            f"{call}: the event page (handle {page.handle:#x}) must be GTT memory of >= {kfd.EVENT_PAGE_SIZE:#x} bytes",
          )
        self.event_page = page
      elif self.event_page is None:
        raise KFDError(
          errno.EINVAL,
          f"{call}: the first event must register the event page (event_page_offset = handle of a GTT allocation of "
          f">= {kfd.EVENT_PAGE_SIZE:#x} bytes)",
        )
      if args.event_type not in (kfd.EVENT_SIGNAL, kfd.EVENT_MEMORY, kfd.EVENT_HW_EXCEPTION):
        raise KFDError(
          errno.EINVAL,
          f"{call}: event_type {args.event_type} is not supported by the mock (SIGNAL, HW_EXCEPTION, MEMORY)",
        )
      event_id, slot = self.next_event_id, self.next_event_id if args.event_type == kfd.EVENT_SIGNAL else 0
      if slot * 8 >= self.event_page.size:
        raise KFDError(errno.ENOSPC, f"{call}: the event page has no slot left for signal event {event_id}")
      self.next_event_id += 1
      if slot:
        ctypes.c_uint64.from_address(self.event_page.address + 8 * slot).value = UNSIGNALED
      self.events[event_id] = Event(event_id, args.event_type, bool(args.auto_reset), slot)
      args.event_id, args.event_trigger_data, args.event_slot_index = event_id, event_id, slot

  def _wait_events(self, args: kfd.WaitEventsArgs) -> None:
    call = "WAIT_EVENTS"
    if args.num_events == 0:
      raise KFDError(errno.EINVAL, f"{call}: num_events is 0")
    if args.events_ptr == 0:
      raise KFDError(errno.EFAULT, f"{call}: events_ptr is NULL")
    items = (kfd.EventData * args.num_events).from_address(args.events_ptr)
    deadline = None if args.timeout == kfd.EVENT_TIMEOUT_INFINITE else time.monotonic() + args.timeout / 1000
    with self.cond:
      events = []
      for i, item in enumerate(items):
        if (event := self.events.get(item.event_id)) is None:
          raise KFDError(errno.EINVAL, f"{call}: events[{i}].event_id {item.event_id} is no event")
        events.append(event)
      waiter, wanted = Waiter(), len({e.event_id for e in events}) if args.wait_for_all else 1
      for event in events:
        if event.triggered:
          waiter.fired.add(event.event_id)
          if event.auto_reset:
            event.triggered = False
        event.waiters.append(waiter)
      try:
        while len(waiter.fired) < wanted and (deadline is None or (left := deadline - time.monotonic()) > 0):
          self.cond.wait(None if deadline is None else left)
      finally:
        for event in events:
          if waiter in event.waiters:
            event.waiters.remove(waiter)
      for item, event in zip(items, events):
        if event.event_id in waiter.fired and event.event_type in (kfd.EVENT_MEMORY, kfd.EVENT_HW_EXCEPTION):
          ctypes.memmove(ctypes.addressof(item), ctypes.addressof(event.data), ctypes.sizeof(event.data))
      args.wait_result = kfd.WAIT_COMPLETE if len(waiter.fired) >= wanted else kfd.WAIT_TIMEOUT

  # ***** queues *****

  @staticmethod
  def _queue_memory(queue: MockQueue) -> list[int]:
    return [a for a in (queue.ring, queue.read_pointer, queue.write_pointer, queue.eop) if a]

  def _engine_factory(self) -> Callable[[MockQueue], Engine]:
    if self.engine_factory is not None:
      return self.engine_factory
    try:
      return importlib.import_module(ENGINE_MODULE).engine
    except ModuleNotFoundError as error:
      if error.name != ENGINE_MODULE:
        raise
      raise KFDError(errno.ENOSYS, f"CREATE_QUEUE: the mock's queue engines ({ENGINE_MODULE}) are missing") from None

  def _doorbell_page(self, gpu: MockGPU) -> int:
    if gpu.doorbell_page is None:
      gpu.doorbell_page = kfd.libc_mmap(
        0, kfd.DOORBELLS_SIZE, kfd.PROT_READ | kfd.PROT_WRITE, kfd.MAP_PRIVATE | kfd.MAP_ANONYMOUS, -1, 0
      )
      self.doorbell_pages.add(gpu.doorbell_page)
    return gpu.doorbell_page

  def _create_queue(self, args: kfd.CreateQueueArgs) -> None:
    call = "CREATE_QUEUE"
    factory = self._engine_factory()
    with self.cond:
      if (percentage := args.queue_percentage & 0xFF) > kfd.MAX_QUEUE_PERCENTAGE:
        raise KFDError(errno.EINVAL, f"{call}: queue_percentage {percentage} exceeds {kfd.MAX_QUEUE_PERCENTAGE}")
      if args.queue_priority > kfd.MAX_QUEUE_PRIORITY:
        raise KFDError(errno.EINVAL, f"{call}: queue_priority {args.queue_priority} exceeds {kfd.MAX_QUEUE_PRIORITY}")
      if args.queue_type not in (kfd.QUEUE_COMPUTE, kfd.QUEUE_SDMA):
        raise KFDError(
          errno.EINVAL, f"{call}: queue_type {args.queue_type} is not supported by the mock (only COMPUTE 0 and SDMA 1)"
        )
      if args.ring_size < 0x1000 or args.ring_size & (args.ring_size - 1):
        raise KFDError(errno.EINVAL, f"{call}: ring_size {args.ring_size:#x} is not a power of 2 >= 0x1000")
      gpu = self._bound(self._gpu(args.gpu_id, call), call, errno.ESRCH)
      buffers = [
        ("ring_base_address", args.ring_base_address, args.ring_size),
        ("read_pointer_address", args.read_pointer_address, 8),
        ("write_pointer_address", args.write_pointer_address, 8),
      ]
      if args.queue_type == kfd.QUEUE_COMPUTE:
        if not args.eop_buffer_address or not args.eop_buffer_size:
          raise KFDError(
            errno.EINVAL,
            f"{call}: a compute queue needs an EOP buffer "
            f"(eop_buffer_address {args.eop_buffer_address:#x}, eop_buffer_size {args.eop_buffer_size:#x})",
          )
        buffers.append(("eop_buffer_address", args.eop_buffer_address, args.eop_buffer_size))
      if args.ctx_save_restore_address:
        buffers.append(("ctx_save_restore_address", args.ctx_save_restore_address, args.ctx_save_restore_size))
      for name, address, size in buffers:
        if name.endswith("pointer_address") and address % 8:
          raise KFDError(errno.EINVAL, f"{call}: {name} {address:#x} is not 8-byte aligned")
        if not address or not gpu.mapped(address, size):
          raise KFDError(
            errno.EINVAL,
            f"{call}: {name} [{address:#x}, {address + size:#x}) is not memory mapped to gpu_id {gpu.gpu_id:#x}",
          )
      queue_id = next(i for i in range(len(self.queues) + 1) if i not in self.queues)
      if (slot := next((s for s in range(kfd.DOORBELLS_SIZE // 8) if s not in gpu.doorbell_slots), None)) is None:
        raise KFDError(errno.ENOMEM, f"{call}: gpu_id {gpu.gpu_id:#x} has no doorbell left")
      doorbell = self._doorbell_page(gpu) + 8 * slot
      ctypes.c_uint64.from_address(doorbell).value = 0
      queue = MockQueue(
        gpu,
        queue_id,
        args.queue_type,
        args.ring_base_address,
        args.ring_size,
        args.read_pointer_address,
        args.write_pointer_address,
        args.eop_buffer_address if args.queue_type == kfd.QUEUE_COMPUTE else 0,
        doorbell,
      )
      self.queues[queue_id], gpu.doorbell_slots[slot] = (queue, None), queue_id
    try:
      engine = factory(queue)
    except BaseException:
      with self.cond:
        del self.queues[queue_id], gpu.doorbell_slots[slot]
      raise
    with self.cond:
      self.queues[queue_id], self.doorbells[doorbell] = (queue, engine), engine
    args.queue_id, args.doorbell_offset = (
      queue_id,
      kfd.MMAP_TYPE_DOORBELL | gpu.gpu_id << kfd.MMAP_GPU_ID_SHIFT | 8 * slot,
    )

  def _destroy_queue(self, args: kfd.DestroyQueueArgs) -> None:
    with self.cond:
      if (entry := self.queues.get(args.queue_id)) is None or entry[1] is None:
        raise KFDError(errno.EINVAL, f"DESTROY_QUEUE: queue_id {args.queue_id} is no queue")
      queue, engine = self.queues.pop(args.queue_id)
      self.doorbells.pop(queue.doorbell)
      del queue.gpu.doorbell_slots[(queue.doorbell - queue.gpu.doorbell_page) // 8]
    engine.stop()

  def write_doorbell(self, address: int, value: int) -> None:
    ctypes.c_uint64.from_address(address).value = value
    if (engine := self.doorbells.get(address)) is not None:
      engine.kick()

  # ***** memory *****

  def mmap(self, address: int, size: int, prot: int, flags: int, fd: int, offset: int) -> int:
    with self.cond:
      if fd == -1:
        if flags & kfd.MAP_FIXED and (clash := self._live_overlap(address, address + size)):
          raise KFDError(
            errno.EINVAL,
            f"mmap: MAP_FIXED at [{address:#x}, {address + size:#x}) would replace the allocation at "
            f"{clash.address:#x}",
          )
        result = kfd.libc_mmap(address, size, prot, flags, fd, offset)
        end = result + -(-size // PAGE) * PAGE
        if prot == kfd.PROT_NONE:
          self.reservations.add(result, end)
        else:
          self.reservations.remove(result, end)
        return result
      if (path := self.fds.get(fd)) is None:
        raise KFDError(errno.EBADF, f"mmap: fd {fd} is not open")
      if path == kfd.KFD_PATH:
        return self._map_doorbells(address, size, flags, offset)
      return self._map_allocation(self.devices[path], address, size, flags, offset)

  def _map_doorbells(self, address: int, size: int, flags: int, offset: int) -> int:
    call = f"mmap of {kfd.KFD_PATH} at offset {offset:#x}"
    if offset & (3 << 62) != kfd.MMAP_TYPE_DOORBELL or offset & ((1 << kfd.MMAP_GPU_ID_SHIFT) - 1):
      raise KFDError(
        errno.EINVAL, f"{call}: not a doorbell page's offset (the mock maps only doorbells from {kfd.KFD_PATH})"
      )
    gpu = self._gpu(offset >> kfd.MMAP_GPU_ID_SHIFT & 0xFFFF, call, "offset's gpu_id")
    if size != kfd.DOORBELLS_SIZE:
      raise KFDError(errno.EINVAL, f"{call}: size {size:#x} is not the doorbell page's {kfd.DOORBELLS_SIZE:#x}")
    if flags & kfd.MAP_FIXED:
      raise KFDError(
        errno.EINVAL, f"{call}: the mock maps the doorbell page only at an address of its choice (no MAP_FIXED)"
      )
    return self._doorbell_page(self._bound(gpu, call, errno.EINVAL))

  def _map_allocation(self, gpu: MockGPU | None, address: int, size: int, flags: int, offset: int) -> int:
    call = f"mmap of the render node at offset {offset:#x}"
    if (allocation := self.tokens.get(offset)) is None:
      raise KFDError(errno.EINVAL, f"{call}: no allocation has this mmap_offset")
    if allocation.gpu is not gpu:
      raise KFDError(
        errno.EINVAL, f"{call}: the allocation belongs to {allocation.gpu}, not to this render node's {gpu}"
      )
    if not flags & kfd.MAP_FIXED or address != allocation.address or size != allocation.size:
      raise KFDError(
        errno.EINVAL,
        f"{call}: the mock maps an allocation whole at its own address with MAP_FIXED "
        f"(asked {size:#x} bytes at {address:#x}, flags {flags:#x}; it has {allocation.size:#x} at "
        f"{allocation.address:#x})",
      )
    allocation.cpu_view, allocation.released = True, False
    return address

  def _live_overlap(self, start: int, end: int) -> Allocation | None:
    return next(
      (
        a for a in self.allocations.values() if a.kind != kfd.USERPTR and a.address < end and start < a.address + a.size
      ),
      None,
    )

  def munmap(self, address: int, size: int) -> None:
    call = f"munmap(address={address:#x}, size={size:#x})"
    if size == 0 or address % PAGE:
      raise KFDError(errno.EINVAL, f"{call}: the address must be page-aligned and the size nonzero")
    end = address + -(-size // PAGE) * PAGE
    with self.cond:
      kept = [
        (a.address, a.address + a.size, a)
        for a in self.allocations.values()
        if a.kind != kfd.USERPTR and a.address < end and address < a.address + a.size
      ]
      kept += [
        (page, page + kfd.DOORBELLS_SIZE, None)
        for page in self.doorbell_pages
        if page < end and address < page + kfd.DOORBELLS_SIZE
      ]
      for start, stop, _ in kept:
        if start < address or stop > end:
          raise KFDError(
            errno.EINVAL, f"{call}: cuts the GPU memory at [{start:#x}, {stop:#x}), which the mock unmaps only whole"
          )
      for user in self.allocations.values():
        if user.kind == kfd.USERPTR and user.gpus and user.address < end and address < user.address + user.size:
          raise KFDError(
            errno.EBUSY, f"{call}: USERPTR memory at {user.address:#x} is still mapped to gpu_ids {ids_text(user.gpus)}"
          )
      cursor = address
      for start, stop, allocation in sorted(kept, key=lambda k: k[0]):
        if cursor < start:
          self._unmap_host(cursor, start)
        if allocation is not None:
          allocation.cpu_view, allocation.released = False, True
        cursor = stop
      if cursor < end:
        self._unmap_host(cursor, end)

  def _unmap_host(self, start: int, end: int) -> None:
    kfd.libc_munmap(start, end - start)
    self.reservations.remove(start, end)


_instance: MockDriver | None = None
_instance_lock = threading.Lock()


def mock_driver() -> MockDriver:
  """The process's one MockDriver (made at the first call), with the default engines."""
  global _instance
  with _instance_lock:
    if _instance is None:
      _instance = MockDriver()
    return _instance
