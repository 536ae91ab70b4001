"""One AMD GPU as the KFD driver shows it: found in the topology, its memory (one virtual address for the CPU and the
GPU), its events and its hardware queues. Every system call goes through a `kfd.Driver`: the real `/dev/kfd`, or the
MOCK.

Memory: a range of addresses is reserved with an inaccessible anonymous mapping, the driver allocates at that address,
and memory the CPU reads too is mapped there from the render node, so a pointer means the same on both sides. VRAM holds
tensors; host-visible memory (GTT, uncached) holds what both write: rings, their read and write pointers, signals,
kernel arguments, staging buffers."""

from __future__ import annotations

import ctypes
import dataclasses
import threading

from pytc.runtime.amd import kfd

PAGE = 0x1000
GC, SDMA0 = 11, 42  # ip_discovery hardware ids: the graphics core and the first SDMA engine
EVENT_PAGES: dict[int, tuple[Memory, set[int]]] = {}  # id(driver) -> the process's event page, the GPUs it is mapped to
EVENT_PAGES_LOCK = threading.Lock()


def round_up(n: int, to: int) -> int:
  return -(-n // to) * to


def arch_of(version: int) -> str:
  """gfx_target_version (major*10000 + minor*100 + stepping, decimal) -> the processor name: 90402 -> gfx942, 90010 ->
  gfx90a."""
  return f"gfx{version // 10000}{version // 100 % 100:x}{version % 100:x}"


@dataclasses.dataclass(frozen=True)
class Memory:
  """`size` bytes at `address` (the same for the CPU and the GPU); `host` when it is host-visible (GTT) memory."""

  address: int
  size: int
  handle: int
  host: bool

  def view(self, offset: int = 0, size: int | None = None) -> memoryview:
    if not self.host:
      raise ValueError("VRAM is not mapped for the CPU: copy through the SDMA queue")
    return memoryview(
      (ctypes.c_uint8 * (self.size - offset if size is None else size)).from_address(self.address + offset)
    ).cast("B")


class KFDGPU:
  """The `index`-th GPU KFD lists (nodes with a nonzero gpu_id, in node order)."""

  def __init__(self, driver: kfd.Driver, index: int = 0):
    self.driver = driver
    try:
      nodes = sorted((n for n in driver.listdir(kfd.TOPOLOGY) if n.isdigit()), key=int)
    except OSError:
      raise RuntimeError(
        f"no AMD GPU driver here ({kfd.TOPOLOGY} is missing: is the amdgpu kernel driver loaded?)"
      ) from None
    gpus = [n for n in nodes if int(driver.read_text(f"{kfd.TOPOLOGY}/{n}/gpu_id").strip() or 0)]
    if not 0 <= index < len(gpus):
      raise RuntimeError(f"no AMD GPU {index}: KFD lists {len(gpus)}")
    node = gpus[index]
    self.gpu_id = int(driver.read_text(f"{kfd.TOPOLOGY}/{node}/gpu_id").strip())
    lines = (line.split() for line in driver.read_text(f"{kfd.TOPOLOGY}/{node}/properties").splitlines())
    self.properties = {parts[0]: int(parts[1]) for parts in lines if len(parts) == 2 and parts[1].lstrip("-").isdigit()}
    self.arch = arch_of(self.properties["gfx_target_version"])
    minor = self.properties["drm_render_minor"]
    self.ip = {hw: self._ip_version(minor, hw) for hw in (GC, SDMA0)}
    self.kfd = driver.open(kfd.KFD_PATH)
    self.render = driver.open(f"/dev/dri/renderD{minor}")
    version = kfd.GetVersionArgs()
    driver.ioctl(self.kfd, "GET_VERSION", version)
    if (version.major_version, version.minor_version) < (1, 14):
      raise RuntimeError(
        f"KFD interface {version.major_version}.{version.minor_version} is older than 1.14, the oldest pytc drives"
      )
    driver.ioctl(self.kfd, "ACQUIRE_VM", kfd.AcquireVMArgs(drm_fd=self.render, gpu_id=self.gpu_id))
    driver.ioctl(self.kfd, "RUNTIME_ENABLE", kfd.RuntimeEnableArgs())
    self.lock = threading.Lock()
    self.doorbells: int | None = None  # the process's doorbell page of this GPU, mapped at the first queue
    self.peer_handles: set[int] = set()  # other GPUs' memory mapped for this one

  def _ip_version(self, minor: int, hw: int) -> tuple[int, int, int]:
    base = f"/sys/class/drm/renderD{minor}/device/ip_discovery/die/0/{hw}/0"
    return tuple(int(self.driver.read_text(f"{base}/{field}").strip()) for field in ("major", "minor", "revision"))

  # ***** memory *****

  def alloc(self, size: int, host: bool) -> Memory:
    """`size` bytes (rounded up to pages) of VRAM, or of host-visible memory (`host`) also mapped for the CPU."""
    size = round_up(max(size, 1), PAGE)
    flags = (
      kfd.WRITABLE
      | kfd.EXECUTABLE
      | kfd.NO_SUBSTITUTE
      | (kfd.GTT | kfd.COHERENT | kfd.UNCACHED | kfd.PUBLIC if host else kfd.VRAM)
    )
    address = self.driver.mmap(0, size, kfd.PROT_NONE, kfd.MAP_PRIVATE | kfd.MAP_ANONYMOUS | kfd.MAP_NORESERVE, -1, 0)
    args = kfd.AllocMemoryArgs(va_addr=address, size=size, gpu_id=self.gpu_id, flags=flags)
    try:
      self.driver.ioctl(self.kfd, "ALLOC_MEMORY_OF_GPU", args)
    except kfd.KFDError as error:
      self.driver.munmap(address, size)
      if error.errno == 12:
        raise MemoryError(
          f"{self.arch} (gpu {self.gpu_id}) has no room for {size} more bytes of {'host' if host else 'VRAM'} memory"
        ) from None
      raise
    if host:
      self.driver.mmap(
        address, size, kfd.PROT_READ | kfd.PROT_WRITE, kfd.MAP_SHARED | kfd.MAP_FIXED, self.render, args.mmap_offset
      )
    memory = Memory(address, size, args.handle, host)
    self.map(memory)
    return memory

  def _map_call(self, name: str, memory: Memory) -> kfd.MapMemoryArgs:
    """MAP_MEMORY_TO_GPU or UNMAP_MEMORY_FROM_GPU of `memory` for this GPU alone."""
    ids = (ctypes.c_uint32 * 1)(self.gpu_id)
    args = kfd.MapMemoryArgs(handle=memory.handle, device_ids_array_ptr=ctypes.addressof(ids), n_devices=1)
    self.driver.ioctl(self.kfd, name, args)
    return args

  def map(self, memory: Memory) -> None:
    """Map `memory` (allocated for this or another GPU of the process) into this GPU's address space."""
    if (mapped := self._map_call("MAP_MEMORY_TO_GPU", memory).n_success) != 1:
      raise RuntimeError(f"KFD mapped {memory.size} bytes at {memory.address:#x} to {mapped} of 1 GPUs")

  def map_peer(self, memory: Memory) -> None:
    """Map another GPU's `memory` for this one (once; it stays mapped while the process lives)."""
    with self.lock:
      if memory.handle not in self.peer_handles:
        self.map(memory)
        self.peer_handles.add(memory.handle)

  def free(self, memory: Memory) -> None:
    self._map_call("UNMAP_MEMORY_FROM_GPU", memory)
    self.driver.ioctl(self.kfd, "FREE_MEMORY_OF_GPU", kfd.FreeMemoryArgs(handle=memory.handle))
    self.driver.munmap(memory.address, memory.size)

  # ***** events *****

  def event_page(self) -> Memory:
    """The process's event page (one per driver: its 8-byte slots are the signal events' mailboxes), mapped to this GPU
    too."""
    with EVENT_PAGES_LOCK:
      if (found := EVENT_PAGES.get(id(self.driver))) is None:
        page = self.alloc(kfd.EVENT_PAGE_SIZE, host=True)
        self.driver.ioctl(
          self.kfd,
          "CREATE_EVENT",
          kfd.CreateEventArgs(event_page_offset=page.handle, event_type=kfd.EVENT_SIGNAL, auto_reset=1),
        )
        EVENT_PAGES[id(self.driver)] = (page, {self.gpu_id})
        return page
      page, mapped_to = found
      if self.gpu_id not in mapped_to:
        self.map(page)
        mapped_to.add(self.gpu_id)
      return page

  def create_event(self, event_type: int) -> kfd.CreateEventArgs:
    """A KFD event: signal events reset when a wait returns them; memory and hardware exceptions stay fired."""
    self.event_page()
    args = kfd.CreateEventArgs(event_type=event_type, auto_reset=int(event_type == kfd.EVENT_SIGNAL), node_id=0)
    self.driver.ioctl(self.kfd, "CREATE_EVENT", args)
    return args

  def wait_events(self, event_ids: list[int], timeout_ms: int) -> list[kfd.EventData]:
    """Sleep until one of the events fires or `timeout_ms` pass; the events' data (a fired memory event holds the
    fault)."""
    events = (kfd.EventData * len(event_ids))()
    for slot, event_id in zip(events, event_ids):
      slot.event_id = event_id
    self.driver.ioctl(
      self.kfd,
      "WAIT_EVENTS",
      kfd.WaitEventsArgs(
        events_ptr=ctypes.addressof(events), num_events=len(event_ids), wait_for_all=0, timeout=timeout_ms
      ),
    )
    return list(events)

  # ***** queues *****

  def context_save_area(self) -> tuple[int, int, int]:
    """(bytes to allocate, ctx_save_restore_size, ctl_stack_size) of the area where the GPU saves a preempted compute
    queue's waves, sized from the topology as KFD checks it."""
    p, gfx9 = self.properties, self.arch.startswith("gfx9")
    xccs = p.get("num_xcc", 1) or 1
    cus = p["simd_count"] // p["simd_per_cu"] // xccs
    waves = cus * p["max_waves_per_simd"] * p["simd_per_cu"]
    if gfx9:
      waves = min(cus * 40, p["array_count"] // p["simd_arrays_per_engine"] * 512)
    vgprs = 0x80000 if gfx9 else 0x60000 if self.ip[GC] in ((11, 0, 0), (11, 0, 1), (11, 5, 1)) else 0x40000
    wg_data = round_up((vgprs + 0x4000 + 0x10000 + 0x1000) * cus, PAGE)
    ctl_stack = round_up((8 if gfx9 else 12) * waves + 8 + 40, PAGE)
    return (wg_data + ctl_stack + round_up(waves * 32, 64)) * xccs, wg_data + ctl_stack, ctl_stack

  def create_queue(
    self,
    queue_type: int,
    ring: Memory,
    pointers: Memory,
    eop: Memory | None = None,
    context_save: tuple[Memory, int, int] | None = None,
  ) -> tuple[int, int]:
    """A hardware queue over `ring`, its write and read pointers at bytes 56 and 128 of `pointers`: (queue id, doorbell
    address)."""
    args = kfd.CreateQueueArgs(
      ring_base_address=ring.address,
      ring_size=ring.size,
      write_pointer_address=pointers.address + 56,
      read_pointer_address=pointers.address + 128,
      gpu_id=self.gpu_id,
      queue_type=queue_type,
      queue_percentage=100,
      queue_priority=7,
    )
    if eop is not None:
      args.eop_buffer_address, args.eop_buffer_size = eop.address, eop.size
    if context_save is not None:
      area, args.ctx_save_restore_size, args.ctl_stack_size = context_save
      args.ctx_save_restore_address = area.address
    self.driver.ioctl(self.kfd, "CREATE_QUEUE", args)
    with self.lock:
      if self.doorbells is None:
        self.doorbells = self.driver.mmap(
          0, 0x2000, kfd.PROT_READ | kfd.PROT_WRITE, kfd.MAP_SHARED, self.kfd, args.doorbell_offset & ~0x1FFF
        )
    return args.queue_id, self.doorbells + (args.doorbell_offset & 0x1FFF)

  def destroy_queue(self, queue_id: int) -> None:
    self.driver.ioctl(self.kfd, "DESTROY_QUEUE", kfd.DestroyQueueArgs(queue_id=queue_id))
