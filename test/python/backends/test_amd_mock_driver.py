"""The KFD interface (runtime/amd/kfd.py) and the fake KFD (runtime/amd/mock_driver.py): struct layouts and ioctl numbers,
the bring-up a runtime does, memory at one address for CPU and GPU, every ioctl's argument checks, events woken from other
threads, queues whose doorbells kick their engines; and the real HostDriver where it runs without a GPU."""
import ctypes
import errno
import os
import threading
import time

import pytest

from pytc.runtime.amd import kfd, mock_driver
from pytc.runtime.amd.kfd import KFDError
from pytc.runtime.amd.mock_driver import MockDriver, MockQueue

GFX942, GFX1100 = 0x8C4D, 0x2F7A
PAGE = mock_driver.PAGE
RW = kfd.PROT_READ | kfd.PROT_WRITE
RESERVE = kfd.MAP_PRIVATE | kfd.MAP_ANONYMOUS | kfd.MAP_NORESERVE
HOST_FLAGS = kfd.GTT | kfd.COHERENT | kfd.UNCACHED | kfd.PUBLIC | kfd.WRITABLE | kfd.EXECUTABLE | kfd.NO_SUBSTITUTE


class FakeEngine:
  """Records what the driver asks of it; `on_kick` runs at each kick (an engine that raises an interrupt, say)."""
  def __init__(self, queue: MockQueue, on_kick=None): self.queue, self.kicks, self.stopped, self.on_kick = queue, [], False, on_kick

  def kick(self) -> None:
    self.kicks.append(ctypes.c_uint64.from_address(self.queue.doorbell).value)
    if self.on_kick is not None: self.on_kick(self.queue)

  def stop(self) -> None: self.stopped = True


class Rig:
  """A MockDriver brought up as a runtime does it: /dev/kfd open, both render nodes open, ACQUIRE_VM done for `acquired` GPUs."""
  def __init__(self, acquired=(GFX942, GFX1100), on_kick=None):
    self.engines: list[FakeEngine] = []
    self.driver = MockDriver(engine_factory=lambda queue: self.engines.append(FakeEngine(queue, on_kick)) or self.engines[-1])
    self.kfd = self.driver.open(kfd.KFD_PATH)
    self.render = {GFX942: self.driver.open("/dev/dri/renderD128"), GFX1100: self.driver.open("/dev/dri/renderD129")}
    for gpu_id in acquired: self.ioctl("ACQUIRE_VM", kfd.AcquireVMArgs(drm_fd=self.render[gpu_id], gpu_id=gpu_id))

  def ioctl(self, name: str, args: ctypes.Structure) -> ctypes.Structure:
    self.driver.ioctl(self.kfd, name, args)
    return args

  def reserve(self, size: int) -> int: return self.driver.mmap(0, size, kfd.PROT_NONE, RESERVE, -1, 0)

  def alloc(self, size: int, gpu_id: int = GFX942, host: bool = True, map_to: tuple[int, ...] = (GFX942,)) -> kfd.AllocMemoryArgs:
    """Reserve, allocate (GTT mapped for the CPU when `host`, else VRAM), map to the GPUs `map_to`."""
    va = self.reserve(size)
    args = self.ioctl("ALLOC_MEMORY_OF_GPU", kfd.AllocMemoryArgs(va_addr=va, size=size, gpu_id=gpu_id, flags=HOST_FLAGS if host else kfd.VRAM))
    if host: assert self.driver.mmap(va, size, RW, kfd.MAP_SHARED | kfd.MAP_FIXED, self.render[gpu_id], args.mmap_offset) == va
    if map_to: assert self.map("MAP_MEMORY_TO_GPU", args.handle, *map_to).n_success == len(map_to)
    return args

  def map(self, name: str, handle: int, *gpu_ids: int, n_devices: int | None = None) -> kfd.MapMemoryArgs:
    ids = (ctypes.c_uint32 * max(len(gpu_ids), 1))(*gpu_ids)
    self.ids = ids  # kept alive past the call
    return self.ioctl(name, kfd.MapMemoryArgs(handle=handle, device_ids_array_ptr=ctypes.addressof(ids),
                                              n_devices=len(gpu_ids) if n_devices is None else n_devices))

  def events(self, *types: tuple[int, int]) -> list[int]:
    """Register the event page, then create events of (type, auto_reset): their ids."""
    page = self.alloc(kfd.EVENT_PAGE_SIZE)
    ids = []
    for i, (event_type, auto_reset) in enumerate(types):
      args = kfd.CreateEventArgs(event_page_offset=page.handle if i == 0 else 0, event_type=event_type, auto_reset=auto_reset)
      ids.append(self.ioctl("CREATE_EVENT", args).event_id)
    self.event_page = page
    return ids

  def wait(self, event_ids: list[int], timeout_ms: int, wait_for_all: int = 0) -> tuple[int, ctypes.Array]:
    items = (kfd.EventData * len(event_ids))()
    for item, event_id in zip(items, event_ids): item.event_id = event_id
    args = self.ioctl("WAIT_EVENTS", kfd.WaitEventsArgs(events_ptr=ctypes.addressof(items), num_events=len(event_ids), wait_for_all=wait_for_all,
                                                        timeout=timeout_ms))
    return args.wait_result, items

  def queue(self, queue_type: int = kfd.QUEUE_SDMA, gpu_id: int = GFX942, **fields) -> tuple[kfd.CreateQueueArgs, kfd.AllocMemoryArgs]:
    """A queue over a fresh 64 KiB GTT buffer: ring in the first 32 KiB, pointers at +0x8000 (wptr +56, rptr +128), EOP at +0x9000."""
    memory = self.alloc(0x10000, gpu_id, map_to=(gpu_id,))
    base = memory.va_addr
    args = kfd.CreateQueueArgs(ring_base_address=base, ring_size=0x8000, write_pointer_address=base + 0x8000 + 56,
                               read_pointer_address=base + 0x8000 + 128, gpu_id=gpu_id, queue_type=queue_type, queue_percentage=100,
                               queue_priority=7, eop_buffer_address=base + 0x9000 if queue_type == kfd.QUEUE_COMPUTE else 0,
                               eop_buffer_size=0x1000 if queue_type == kfd.QUEUE_COMPUTE else 0)
    for name, value in fields.items(): setattr(args, name, value)
    return self.ioctl("CREATE_QUEUE", args), memory


def raises(err: int, *words: str):
  """pytest.raises(KFDError) whose errno is `err` and whose message names every word."""
  class Check:
    def __enter__(self):
      self.context = pytest.raises(KFDError)
      self.info = self.context.__enter__()
      return self.info

    def __exit__(self, *exc):
      handled = self.context.__exit__(*exc)
      assert self.info.value.errno == err, (errno.errorcode[self.info.value.errno], str(self.info.value))
      for word in words: assert word in str(self.info.value), (word, str(self.info.value))
      return handled
  return Check()


# ***** kfd.py *****

def test_struct_layouts():
  sizes = {kfd.GetVersionArgs: 8, kfd.CreateQueueArgs: 96, kfd.DestroyQueueArgs: 8, kfd.CreateEventArgs: 32, kfd.WaitEventsArgs: 24,
           kfd.EventData: 48, kfd.AcquireVMArgs: 8, kfd.AllocMemoryArgs: 40, kfd.FreeMemoryArgs: 8, kfd.MapMemoryArgs: 24, kfd.RuntimeEnableArgs: 16}
  assert {s: ctypes.sizeof(s) for s in sizes} == sizes
  assert [kfd.CreateQueueArgs.doorbell_offset.offset, kfd.CreateQueueArgs.queue_id.offset, kfd.CreateQueueArgs.eop_buffer_address.offset,
          kfd.CreateQueueArgs.sdma_engine_id.offset] == [24, 52, 56, 88]
  assert [kfd.AllocMemoryArgs.mmap_offset.offset, kfd.AllocMemoryArgs.gpu_id.offset, kfd.AllocMemoryArgs.flags.offset] == [24, 32, 36]
  memory = kfd.MemoryExceptionData
  assert [memory.failure_imprecise.offset, memory.va.offset, memory.gpu_id.offset, memory.error_type.offset] == [12, 16, 24, 28]
  assert [kfd.HwExceptionData.gpu_id.offset, kfd.EventData.ext.offset, kfd.EventData.event_id.offset] == [12, 32, 40]
  item = kfd.EventData(event_id=5)
  item.memory_exception_data.va = 0x1234000
  assert item.hw_exception_data.reset_type == 0 and bytes(item)[16:24] == (0x1234000).to_bytes(8, "little") and bytes(item)[40] == 5


def test_request_numbers():
  assert kfd.request("GET_VERSION") == 0x80084B01  # _IOR('K', 1, 8 bytes)
  assert kfd.request("CREATE_QUEUE") == 0xC0604B02  # _IOWR('K', 2, 96 bytes)
  assert kfd.request("ALLOC_MEMORY_OF_GPU") == 0xC0284B16
  assert kfd.request("ACQUIRE_VM") == 0x40084B15 and kfd.request("FREE_MEMORY_OF_GPU") == 0x40084B17  # _IOW
  assert kfd.request("WAIT_EVENTS") == 0xC0184B0C and kfd.request("RUNTIME_ENABLE") == 0xC0104B25
  assert kfd.request("UNMAP_MEMORY_FROM_GPU") == 0xC0184B19
  with pytest.raises(ValueError, match="SET_EVENT"): kfd.request("SET_EVENT")
  with pytest.raises(TypeError, match="AcquireVMArgs"): kfd.check_args("ACQUIRE_VM", kfd.GetVersionArgs())


def test_kfd_error():
  error = KFDError(errno.EINVAL, "ALLOC_MEMORY_OF_GPU: size 0x0")
  assert isinstance(error, OSError) and error.errno == errno.EINVAL and error.strerror == os.strerror(errno.EINVAL)
  assert str(error) == f"ALLOC_MEMORY_OF_GPU: size 0x0 (EINVAL: {os.strerror(errno.EINVAL)})"


# ***** HostDriver on this machine (no /dev/kfd needed) *****

@pytest.mark.skipif(os.path.exists(kfd.KFD_PATH), reason="this machine has a KFD")
def test_host_driver_without_kfd():
  with pytest.raises(FileNotFoundError): kfd.HostDriver().open(kfd.KFD_PATH)


def test_host_driver_calls(tmp_path):
  host = kfd.HostDriver()
  address = host.mmap(0, 2 * PAGE, RW, kfd.MAP_PRIVATE | kfd.MAP_ANONYMOUS, -1, 0)
  assert address % PAGE == 0 and kfd.is_mapped(address, 2 * PAGE)
  host.write_doorbell(address + 8, 0x1122334455667788)
  assert ctypes.c_uint64.from_address(address + 8).value == 0x1122334455667788
  host.munmap(address, 2 * PAGE)
  assert not kfd.is_mapped(address, PAGE)
  with pytest.raises(KFDError) as info: host.munmap(address + 1, PAGE)
  assert info.value.errno == errno.EINVAL and "munmap" in str(info.value)
  with pytest.raises(KFDError) as info: host.mmap(0, PAGE, RW, kfd.MAP_SHARED, 1 << 20, 0)
  assert info.value.errno == errno.EBADF and "mmap" in str(info.value)
  fd = host.open(os.devnull)
  try:
    with pytest.raises(KFDError) as info: host.ioctl(fd, "GET_VERSION", kfd.GetVersionArgs())
    assert info.value.errno == errno.ENOTTY and "GET_VERSION" in str(info.value)
  finally: host.close(fd)
  (tmp_path / "properties").write_text("simd_count 4\n")
  assert host.read_text(str(tmp_path / "properties")) == "simd_count 4\n" and host.listdir(str(tmp_path)) == ["properties"]
  assert host.exists(str(tmp_path)) and not host.exists(str(tmp_path / "gpu_id"))


# ***** the mock: files and bring-up *****

def test_topology_and_ip_discovery():
  driver = MockDriver()
  assert driver.listdir(kfd.TOPOLOGY) == ["0", "1", "2"]
  assert [int(driver.read_text(f"{kfd.TOPOLOGY}/{n}/gpu_id")) for n in ("0", "1", "2")] == [0, GFX1100, GFX942]
  props = {}
  for node in ("1", "2"):
    lines = driver.read_text(f"{kfd.TOPOLOGY}/{node}/properties").splitlines()
    props[node] = {key: int(value) for key, value in (line.split() for line in lines)}
  assert props["2"]["gfx_target_version"] == 90402 and props["1"]["gfx_target_version"] == 110000
  assert (props["2"]["drm_render_minor"], props["1"]["drm_render_minor"]) == (128, 129)
  assert (props["2"]["wave_front_size"], props["1"]["wave_front_size"]) == (64, 32) and props["2"]["num_xcc"] == 1
  assert props["2"]["simd_count"] // props["2"]["simd_per_cu"] == 38 and props["2"]["local_mem_size"] == 8 << 30
  assert [driver.gpus[GFX942].arch, driver.gpus[GFX1100].arch] == ["gfx942", "gfx1100"]
  versions = {}
  for minor in (128, 129):
    for hw_id in (kfd.GC_HWID, kfd.SDMA0_HWID, kfd.NBIF_HWID):
      base = kfd.IP_DISCOVERY.format(minor=minor, hw_id=hw_id)
      versions[minor, hw_id] = tuple(int(driver.read_text(f"{base}/{name}")) for name in ("major", "minor", "revision"))
  assert [versions[128, h] for h in (11, 42, 108)] == [(9, 4, 2), (4, 4, 2), (7, 9, 0)]
  assert [versions[129, h] for h in (11, 42, 108)] == [(11, 0, 0), (6, 0, 0), (4, 3, 0)]
  assert {"gpu_id", "properties", "mem_banks"} <= set(driver.listdir(f"{kfd.TOPOLOGY}/1"))
  assert driver.exists(kfd.KFD_PATH) and driver.exists("/dev/dri/renderD129") and driver.exists(kfd.TOPOLOGY + "/")
  assert driver.listdir("/dev/dri") == ["renderD128", "renderD129"] and not driver.exists("/dev/dri/renderD130")
  with pytest.raises(FileNotFoundError): driver.read_text("/sys/class/drm/renderD128/device/vendor")
  with pytest.raises(FileNotFoundError): driver.listdir("/proc")
  with pytest.raises(IsADirectoryError): driver.read_text(kfd.TOPOLOGY)
  with pytest.raises(NotADirectoryError): driver.listdir(f"{kfd.TOPOLOGY}/1/gpu_id")


def test_bring_up():
  driver = MockDriver()
  kfd_fd, render = driver.open(kfd.KFD_PATH), driver.open("/dev/dri/renderD128")
  assert kfd_fd >= 1 << 30 and render >= 1 << 30 and kfd_fd != render
  version = kfd.GetVersionArgs()
  driver.ioctl(kfd_fd, "GET_VERSION", version)
  assert (version.major_version, version.minor_version) == (1, 14)
  driver.ioctl(kfd_fd, "ACQUIRE_VM", kfd.AcquireVMArgs(drm_fd=render, gpu_id=GFX942))
  driver.ioctl(kfd_fd, "ACQUIRE_VM", kfd.AcquireVMArgs(drm_fd=render, gpu_id=GFX942))  # the same file again: fine
  driver.ioctl(kfd_fd, "RUNTIME_ENABLE", kfd.RuntimeEnableArgs())
  assert driver.gpus[GFX942].vm_fd == render and driver.gpus[GFX1100].vm_fd is None
  with pytest.raises(FileNotFoundError): driver.open("/dev/dri/renderD130")
  with pytest.raises(OSError) as info: driver.close(12345)
  assert info.value.errno == errno.EBADF
  driver.close(render)
  with raises(errno.EBADF, "GET_VERSION", str(render)): driver.ioctl(render, "GET_VERSION", kfd.GetVersionArgs())
  assert mock_driver.mock_driver() is mock_driver.mock_driver()


def test_ioctl_descriptor_and_vm_errors():
  rig = Rig(acquired=())
  with raises(errno.ENOTTY, "GET_VERSION", "renderD128"): rig.driver.ioctl(rig.render[GFX942], "GET_VERSION", kfd.GetVersionArgs())
  with raises(errno.EBADF, "not open"): rig.driver.ioctl(99, "GET_VERSION", kfd.GetVersionArgs())
  with pytest.raises(TypeError, match="AllocMemoryArgs"): rig.ioctl("ALLOC_MEMORY_OF_GPU", kfd.FreeMemoryArgs())
  with raises(errno.EINVAL, "gpu_id 0x1234"): rig.ioctl("ACQUIRE_VM", kfd.AcquireVMArgs(drm_fd=rig.render[GFX942], gpu_id=0x1234))
  with raises(errno.EINVAL, "drm_fd 7"): rig.ioctl("ACQUIRE_VM", kfd.AcquireVMArgs(drm_fd=7, gpu_id=GFX942))
  with raises(errno.EINVAL, "renderD129"): rig.ioctl("ACQUIRE_VM", kfd.AcquireVMArgs(drm_fd=rig.render[GFX1100], gpu_id=GFX942))
  with raises(errno.EINVAL, "/dev/kfd"): rig.ioctl("ACQUIRE_VM", kfd.AcquireVMArgs(drm_fd=rig.kfd, gpu_id=GFX942))
  rig.ioctl("ACQUIRE_VM", kfd.AcquireVMArgs(drm_fd=rig.render[GFX942], gpu_id=GFX942))
  other = rig.driver.open("/dev/dri/renderD128")
  with raises(errno.EBUSY, "already"): rig.ioctl("ACQUIRE_VM", kfd.AcquireVMArgs(drm_fd=other, gpu_id=GFX942))
  va = rig.reserve(PAGE)
  with raises(errno.ENODEV, "ACQUIRE_VM first"):
    rig.ioctl("ALLOC_MEMORY_OF_GPU", kfd.AllocMemoryArgs(va_addr=va, size=PAGE, gpu_id=GFX1100, flags=kfd.GTT))


# ***** memory *****

def test_allocation_is_memory_at_the_same_address():
  rig = Rig()
  gpu = rig.driver.gpus[GFX942]
  args = rig.alloc(4 * PAGE)
  va = args.va_addr
  assert args.handle >> 32 == GFX942 and args.mmap_offset % PAGE == 0 and args.mmap_offset
  words = (ctypes.c_uint32 * PAGE).from_address(va)
  for i in range(0, PAGE, 97): words[i] = i * 3 + 1
  assert [words[i] for i in range(0, PAGE, 97)] == [i * 3 + 1 for i in range(0, PAGE, 97)]
  assert gpu.mapped(va, 4 * PAGE) and not gpu.mapped(va, 4 * PAGE + 1) and not rig.driver.gpus[GFX1100].mapped(va, 1)
  rig.map("MAP_MEMORY_TO_GPU", args.handle, GFX942, GFX1100)  # a peer too; mapping twice is no error
  assert rig.driver.gpus[GFX1100].mapped(va + PAGE, 8)
  assert rig.map("UNMAP_MEMORY_FROM_GPU", args.handle, GFX942, GFX1100).n_success == 2
  assert not gpu.mapped(va, 1) and not rig.driver.gpus[GFX1100].mapped(va, 1)
  rig.driver.munmap(va, 4 * PAGE)  # the caller lets its mapping go; the memory lives until FREE
  rig.ioctl("FREE_MEMORY_OF_GPU", kfd.FreeMemoryArgs(handle=args.handle))
  assert not kfd.is_mapped(va, PAGE) and args.handle not in rig.driver.allocations


def test_adjacent_allocations_and_free_before_munmap():
  rig = Rig()
  va = rig.reserve(2 * PAGE)
  handles = []
  for address in (va, va + PAGE):
    args = rig.ioctl("ALLOC_MEMORY_OF_GPU", kfd.AllocMemoryArgs(va_addr=address, size=PAGE, gpu_id=GFX942, flags=kfd.VRAM))
    rig.map("MAP_MEMORY_TO_GPU", args.handle, GFX942)
    handles.append(args.handle)
  assert rig.driver.gpus[GFX942].mapped(va + PAGE - 4, 8) and rig.driver.gpus[GFX942].vram_used == 2 * PAGE
  for handle in handles:
    rig.map("UNMAP_MEMORY_FROM_GPU", handle, GFX942)
    rig.ioctl("FREE_MEMORY_OF_GPU", kfd.FreeMemoryArgs(handle=handle))
  assert rig.driver.gpus[GFX942].vram_used == 0 and not rig.driver.gpus[GFX942].mapped(va, 1)
  # FREE of memory the caller never mapped gives it back its reservation: allocating there again works
  again = rig.ioctl("ALLOC_MEMORY_OF_GPU", kfd.AllocMemoryArgs(va_addr=va, size=2 * PAGE, gpu_id=GFX942, flags=kfd.VRAM))
  rig.ioctl("FREE_MEMORY_OF_GPU", kfd.FreeMemoryArgs(handle=again.handle))
  rig.driver.munmap(va, 2 * PAGE)
  assert not kfd.is_mapped(va, 2 * PAGE) and not rig.driver.reservations.overlaps(va, va + 2 * PAGE)


def test_vram_limit():
  rig = Rig()
  limit = rig.driver.gpus[GFX942].properties["local_mem_size"]
  va = rig.reserve(limit + PAGE)
  with raises(errno.ENOMEM, "VRAM", hex(GFX942)):
    rig.ioctl("ALLOC_MEMORY_OF_GPU", kfd.AllocMemoryArgs(va_addr=va, size=limit + PAGE, gpu_id=GFX942, flags=kfd.VRAM))
  big = rig.ioctl("ALLOC_MEMORY_OF_GPU", kfd.AllocMemoryArgs(va_addr=va, size=limit, gpu_id=GFX942, flags=kfd.VRAM))
  with raises(errno.ENOMEM, "VRAM"):
    rig.ioctl("ALLOC_MEMORY_OF_GPU", kfd.AllocMemoryArgs(va_addr=va + limit, size=PAGE, gpu_id=GFX942, flags=kfd.VRAM))
  rig.ioctl("ALLOC_MEMORY_OF_GPU", kfd.AllocMemoryArgs(va_addr=va + limit, size=PAGE, gpu_id=GFX942, flags=kfd.GTT))  # GTT is not VRAM
  rig.ioctl("FREE_MEMORY_OF_GPU", kfd.FreeMemoryArgs(handle=big.handle))
  assert rig.driver.gpus[GFX942].vram_used == 0


def test_alloc_argument_errors():
  rig = Rig()
  va = rig.reserve(4 * PAGE)

  def alloc(**fields):
    rig.ioctl("ALLOC_MEMORY_OF_GPU", kfd.AllocMemoryArgs(**{"va_addr": va, "size": PAGE, "gpu_id": GFX942, "flags": kfd.VRAM, **fields}))
  with raises(errno.EINVAL, "gpu_id 0x99"): alloc(gpu_id=0x99)
  with raises(errno.EINVAL, "size 0x0"): alloc(size=0)
  with raises(errno.EINVAL, "size 0x1001"): alloc(size=PAGE + 1)
  with raises(errno.EINVAL, "va_addr"): alloc(va_addr=va + 8)
  with raises(errno.EINVAL, "exactly one"): alloc(flags=kfd.VRAM | kfd.GTT)
  with raises(errno.EINVAL, "exactly one"): alloc(flags=kfd.WRITABLE)
  with raises(errno.EINVAL, "DOORBELL"): alloc(flags=kfd.DOORBELL)
  with raises(errno.EINVAL, "reservation"): alloc(va_addr=va + 4 * PAGE + (1 << 30))
  with raises(errno.EINVAL, "reservation"): alloc(size=8 * PAGE)  # runs past the reservation
  alloc(va_addr=va + PAGE, size=2 * PAGE)
  with raises(errno.EINVAL, "overlaps"): alloc(size=2 * PAGE)
  with raises(errno.EINVAL, "must equal va_addr"): alloc(va_addr=va + 3 * PAGE, flags=kfd.USERPTR, mmap_offset=va)
  with raises(errno.EFAULT, "USERPTR"): alloc(va_addr=va + 3 * PAGE, flags=kfd.USERPTR, mmap_offset=va + 3 * PAGE)  # PROT_NONE: no memory
  with raises(errno.EINVAL, "MAP_FIXED"): rig.driver.mmap(va, 4 * PAGE, RW, kfd.MAP_PRIVATE | kfd.MAP_ANONYMOUS | kfd.MAP_FIXED, -1, 0)


def test_userptr_memory():
  rig = Rig()
  host = rig.driver.mmap(0, 2 * PAGE, RW, kfd.MAP_SHARED | kfd.MAP_ANONYMOUS, -1, 0)
  ctypes.c_uint64.from_address(host).value = 42
  args = rig.ioctl("ALLOC_MEMORY_OF_GPU", kfd.AllocMemoryArgs(va_addr=host, size=2 * PAGE, gpu_id=GFX1100, mmap_offset=host,
                                                              flags=kfd.USERPTR | kfd.COHERENT | kfd.UNCACHED))
  assert args.mmap_offset == host and ctypes.c_uint64.from_address(host).value == 42
  rig.map("MAP_MEMORY_TO_GPU", args.handle, GFX1100)
  assert rig.driver.gpus[GFX1100].mapped(host, 2 * PAGE)
  with raises(errno.EBUSY, "USERPTR"): rig.driver.munmap(host, PAGE)
  rig.map("UNMAP_MEMORY_FROM_GPU", args.handle, GFX1100)
  rig.ioctl("FREE_MEMORY_OF_GPU", kfd.FreeMemoryArgs(handle=args.handle))
  assert ctypes.c_uint64.from_address(host).value == 42  # the caller's memory, untouched
  rig.driver.munmap(host, 2 * PAGE)
  assert not kfd.is_mapped(host, PAGE)


def test_map_free_and_mmap_errors():
  rig = Rig(acquired=(GFX942,))
  args = rig.alloc(2 * PAGE)
  handle = args.handle
  with raises(errno.EBUSY, "still mapped", hex(GFX942)): rig.ioctl("FREE_MEMORY_OF_GPU", kfd.FreeMemoryArgs(handle=handle))
  with raises(errno.EINVAL, "n_devices is 0"): rig.map("MAP_MEMORY_TO_GPU", handle)
  with raises(errno.EINVAL, "n_success 2 exceeds"):
    rig.ioctl("MAP_MEMORY_TO_GPU", kfd.MapMemoryArgs(handle=handle, device_ids_array_ptr=8, n_devices=1, n_success=2))
  with raises(errno.EFAULT, "device_ids_array_ptr"): rig.ioctl("MAP_MEMORY_TO_GPU", kfd.MapMemoryArgs(handle=handle, n_devices=1))
  with raises(errno.ENOMEM, "no live allocation"): rig.map("MAP_MEMORY_TO_GPU", handle + 7, GFX942)  # KFD's answer for a stale handle
  with raises(errno.EINVAL, "handle's gpu_id"): rig.map("MAP_MEMORY_TO_GPU", 5, GFX942)
  with raises(errno.EINVAL, "device_ids_array_ptr[1]"): rig.map("MAP_MEMORY_TO_GPU", handle, GFX942, 0x77)
  partial = kfd.MapMemoryArgs(handle=handle, device_ids_array_ptr=ctypes.addressof(ids := (ctypes.c_uint32 * 2)(GFX942, GFX1100)), n_devices=2)
  with raises(errno.ENODEV, "ACQUIRE_VM first"): rig.ioctl("MAP_MEMORY_TO_GPU", partial)
  assert partial.n_success == 1 and ids[0] == GFX942  # the first GPU was mapped before the second failed
  with raises(errno.EINVAL, "no live allocation"): rig.ioctl("FREE_MEMORY_OF_GPU", kfd.FreeMemoryArgs(handle=handle + 7))
  render = rig.render[GFX942]
  with raises(errno.EINVAL, "no allocation has this mmap_offset"):
    rig.driver.mmap(args.va_addr, 2 * PAGE, RW, kfd.MAP_SHARED | kfd.MAP_FIXED, render, 12345)
  with raises(errno.EINVAL, "whole"): rig.driver.mmap(args.va_addr, PAGE, RW, kfd.MAP_SHARED | kfd.MAP_FIXED, render, args.mmap_offset)
  with raises(errno.EINVAL, "whole"): rig.driver.mmap(0, 2 * PAGE, RW, kfd.MAP_SHARED, render, args.mmap_offset)
  with raises(errno.EINVAL, "belongs to"):
    rig.driver.mmap(args.va_addr, 2 * PAGE, RW, kfd.MAP_SHARED | kfd.MAP_FIXED, rig.render[GFX1100], args.mmap_offset)
  with raises(errno.EBADF, "fd 4242"): rig.driver.mmap(0, PAGE, RW, kfd.MAP_SHARED, 4242, 0)
  with raises(errno.EINVAL, "only whole"): rig.driver.munmap(args.va_addr, PAGE)
  with raises(errno.EINVAL, "page-aligned"): rig.driver.munmap(args.va_addr + 1, PAGE)
  rig.map("UNMAP_MEMORY_FROM_GPU", handle, GFX942)
  rig.ioctl("FREE_MEMORY_OF_GPU", kfd.FreeMemoryArgs(handle=handle))  # FREE before munmap works too
  assert ctypes.c_uint64.from_address(args.va_addr).value == 0  # still mapped for the CPU until munmap, as a BO is
  rig.driver.munmap(args.va_addr, 2 * PAGE)
  assert not kfd.is_mapped(args.va_addr, PAGE)


# ***** events *****

def test_event_page_and_event_errors():
  rig = Rig()
  with raises(errno.EINVAL, "event page"): rig.ioctl("CREATE_EVENT", kfd.CreateEventArgs(event_type=kfd.EVENT_SIGNAL))
  small = rig.alloc(PAGE)
  with raises(errno.EINVAL, "GTT memory of >= 0x8000"):
    rig.ioctl("CREATE_EVENT", kfd.CreateEventArgs(event_page_offset=small.handle, event_type=kfd.EVENT_SIGNAL))
  signal, memory, hw = rig.events((kfd.EVENT_SIGNAL, 1), (kfd.EVENT_MEMORY, 0), (kfd.EVENT_HW_EXCEPTION, 0))
  assert (signal, memory, hw) == (1, 2, 3)
  assert ctypes.c_uint64.from_address(rig.event_page.va_addr + 8 * signal).value == (1 << 64) - 1  # the mailbox, unsignaled
  created = rig.ioctl("CREATE_EVENT", kfd.CreateEventArgs(event_type=kfd.EVENT_SIGNAL, auto_reset=1))
  assert (created.event_id, created.event_slot_index, created.event_trigger_data) == (4, 4, 4)
  with raises(errno.EINVAL, "already set"):
    rig.ioctl("CREATE_EVENT", kfd.CreateEventArgs(event_page_offset=rig.event_page.handle, event_type=kfd.EVENT_SIGNAL))
  with raises(errno.EINVAL, "event_type 7"): rig.ioctl("CREATE_EVENT", kfd.CreateEventArgs(event_type=kfd.EVENT_QUEUE))
  with raises(errno.EPERM, "event page"):
    rig.map("UNMAP_MEMORY_FROM_GPU", rig.event_page.handle, GFX942)
    rig.ioctl("FREE_MEMORY_OF_GPU", kfd.FreeMemoryArgs(handle=rig.event_page.handle))
  with raises(errno.EINVAL, "events[1].event_id 99"): rig.wait([signal, 99], 0)
  with raises(errno.EINVAL, "num_events is 0"): rig.ioctl("WAIT_EVENTS", kfd.WaitEventsArgs(events_ptr=8, num_events=0))
  with raises(errno.EFAULT, "events_ptr"): rig.ioctl("WAIT_EVENTS", kfd.WaitEventsArgs(num_events=1))


def test_wait_times_out():
  rig = Rig()
  signal, memory = rig.events((kfd.EVENT_SIGNAL, 1), (kfd.EVENT_MEMORY, 0))
  start = time.monotonic()
  result, items = rig.wait([signal, memory], 30)
  assert result == kfd.WAIT_TIMEOUT and time.monotonic() - start >= 0.025
  assert items[1].memory_exception_data.gpu_id == 0 and rig.wait([signal], 0)[0] == kfd.WAIT_TIMEOUT


def test_wait_woken_from_another_thread():
  rig = Rig()
  gpu = rig.driver.gpus[GFX1100]
  signal, other = rig.events((kfd.EVENT_SIGNAL, 1), (kfd.EVENT_SIGNAL, 0))
  timer = threading.Timer(0.02, gpu.signal_event, (signal,))
  timer.start()
  result, _ = rig.wait([other, signal], 10_000)
  timer.join()
  assert result == kfd.WAIT_COMPLETE
  assert rig.wait([signal], 0)[0] == kfd.WAIT_TIMEOUT  # auto-reset: the wait it woke consumed it
  gpu.signal_event(signal)  # fired with nobody waiting: stays signaled until one wait takes it
  assert rig.wait([signal], 0)[0] == kfd.WAIT_COMPLETE and rig.wait([signal], 0)[0] == kfd.WAIT_TIMEOUT
  gpu.signal_event(other)  # not auto-reset: stays signaled
  assert rig.wait([other], 0)[0] == kfd.WAIT_COMPLETE and rig.wait([other], 0)[0] == kfd.WAIT_COMPLETE
  assert rig.wait([signal, other], 0, wait_for_all=1)[0] == kfd.WAIT_TIMEOUT
  gpu.signal_event(signal)
  assert rig.wait([signal, other], 0, wait_for_all=1)[0] == kfd.WAIT_COMPLETE
  gpu.signal_event(12345)  # no such event: ignored


def test_memory_fault_fills_the_exception_data():
  rig = Rig()
  gpu = rig.driver.gpus[GFX942]
  signal, memory, hw = rig.events((kfd.EVENT_SIGNAL, 1), (kfd.EVENT_MEMORY, 0), (kfd.EVENT_HW_EXCEPTION, 0))
  timer = threading.Timer(0.02, gpu.memory_fault, (0x7F0012345678, "load from unmapped memory"))
  timer.start()
  result, items = rig.wait([signal, memory, hw], 10_000)
  timer.join()
  assert result == kfd.WAIT_COMPLETE and gpu.faults == [(0x7F0012345678, "load from unmapped memory")]
  data = items[1].memory_exception_data
  faulting_page = 0x7F0012345678 & ~(PAGE - 1)
  assert (data.va, data.gpu_id, data.failure_not_present, data.failure_read_only, data.failure_imprecise) == (faulting_page, GFX942, 1, 0, 0)
  assert items[0].memory_exception_data.gpu_id == 0 and items[2].hw_exception_data.gpu_id == 0 and items[1].event_id == memory


# ***** queues *****

def test_queues_doorbells_and_engines():
  rig = Rig()
  sdma, sdma_memory = rig.queue(kfd.QUEUE_SDMA)
  compute, _ = rig.queue(kfd.QUEUE_COMPUTE)
  assert (sdma.queue_id, compute.queue_id) == (0, 1) and len(rig.engines) == 2
  sdma_engine, compute_engine = rig.engines
  queue = sdma_engine.queue
  assert (queue.gpu.gpu_id, queue.kind, queue.ring, queue.ring_size, queue.eop) == (GFX942, kfd.QUEUE_SDMA, sdma_memory.va_addr, 0x8000, 0)
  assert (queue.write_pointer, queue.read_pointer) == (sdma_memory.va_addr + 0x8000 + 56, sdma_memory.va_addr + 0x8000 + 128)
  assert compute_engine.queue.kind == kfd.QUEUE_COMPUTE and compute_engine.queue.eop == compute.eop_buffer_address
  assert sdma.doorbell_offset >> 62 == 3 and sdma.doorbell_offset & ~0x1FFF == compute.doorbell_offset & ~0x1FFF
  page = rig.driver.mmap(0, kfd.DOORBELLS_SIZE, RW, kfd.MAP_SHARED, rig.kfd, sdma.doorbell_offset & ~0x1FFF)
  doorbell = page + (sdma.doorbell_offset & 0x1FFF)
  assert doorbell == queue.doorbell and page + (compute.doorbell_offset & 0x1FFF) == compute_engine.queue.doorbell != doorbell
  rig.driver.write_doorbell(doorbell, 0x40)
  rig.driver.write_doorbell(doorbell, 0x80)
  assert sdma_engine.kicks == [0x40, 0x80] and compute_engine.kicks == []
  rig.driver.write_doorbell(page + 0x1000, 9)  # no queue's doorbell: just the store
  assert ctypes.c_uint64.from_address(page + 0x1000).value == 9 and sdma_engine.kicks == [0x40, 0x80]
  with raises(errno.EBUSY, "queue 0"): rig.map("UNMAP_MEMORY_FROM_GPU", sdma_memory.handle, GFX942)
  rig.ioctl("DESTROY_QUEUE", kfd.DestroyQueueArgs(queue_id=sdma.queue_id))
  assert sdma_engine.stopped and not compute_engine.stopped
  rig.driver.write_doorbell(doorbell, 0xC0)
  assert sdma_engine.kicks == [0x40, 0x80]
  with raises(errno.EINVAL, "queue_id 0"): rig.ioctl("DESTROY_QUEUE", kfd.DestroyQueueArgs(queue_id=sdma.queue_id))
  rig.map("UNMAP_MEMORY_FROM_GPU", sdma_memory.handle, GFX942)
  again, _ = rig.queue(kfd.QUEUE_SDMA, gpu_id=GFX1100)
  assert again.queue_id == 0 and again.doorbell_offset >> 46 & 0xFFFF == GFX1100
  rig.driver.munmap(page, kfd.DOORBELLS_SIZE)  # the doorbell page stays for the other mappings of it
  rig.driver.write_doorbell(compute_engine.queue.doorbell, 1)
  assert compute_engine.kicks == [1]


def test_doorbell_kick_raises_the_interrupt_a_wait_sleeps_on():
  rig = Rig(on_kick=lambda queue: threading.Timer(0.01, queue.gpu.signal_event, (1,)).start())
  (event,) = rig.events((kfd.EVENT_SIGNAL, 1))
  sdma, _ = rig.queue(kfd.QUEUE_SDMA)
  page = rig.driver.mmap(0, kfd.DOORBELLS_SIZE, RW, kfd.MAP_SHARED, rig.kfd, sdma.doorbell_offset & ~0x1FFF)
  rig.driver.write_doorbell(page + (sdma.doorbell_offset & 0x1FFF), 16)
  assert event == 1 and rig.wait([event], 10_000)[0] == kfd.WAIT_COMPLETE


def test_queue_argument_errors(monkeypatch):
  rig = Rig(acquired=(GFX942,))
  with raises(errno.EINVAL, "not supported by the mock"): rig.queue(kfd.QUEUE_COMPUTE_AQL)
  with raises(errno.EINVAL, "ring_size 0x3000"): rig.queue(ring_size=0x3000)
  with raises(errno.EINVAL, "ring_size 0x800"): rig.queue(ring_size=0x800)
  with raises(errno.EINVAL, "ring_base_address"): rig.queue(ring_size=1 << 24)  # runs past the mapped memory
  with raises(errno.EINVAL, "ring_base_address"): rig.queue(ring_base_address=PAGE)
  with raises(errno.EINVAL, "read_pointer_address", "8-byte"): rig.queue(read_pointer_address=rig.driver.gpus[GFX942].ranges.spans[0][0] + 4)
  with raises(errno.EINVAL, "EOP"): rig.queue(kfd.QUEUE_COMPUTE, eop_buffer_size=0)
  with raises(errno.EINVAL, "queue_percentage 101"): rig.queue(queue_percentage=101)
  rig.queue(queue_percentage=100 | 3 << 8)  # bits 8..15 name the XCC
  with raises(errno.EINVAL, "queue_priority 16"): rig.queue(queue_priority=16)
  with raises(errno.EINVAL, "gpu_id 0x5"): rig.queue(gpu_id=5)
  memory = rig.alloc(0x10000, GFX942, map_to=(GFX942,))
  with raises(errno.ESRCH, "ACQUIRE_VM first"):
    rig.ioctl("CREATE_QUEUE", kfd.CreateQueueArgs(ring_base_address=memory.va_addr, ring_size=0x1000, gpu_id=GFX1100, queue_type=kfd.QUEUE_SDMA,
                                                  read_pointer_address=memory.va_addr + 0x2000, write_pointer_address=memory.va_addr + 0x2008))
  sdma, _ = rig.queue()
  call = "mmap of /dev/kfd"
  with raises(errno.EINVAL, call, "size 0x1000"): rig.driver.mmap(0, 0x1000, RW, kfd.MAP_SHARED, rig.kfd, sdma.doorbell_offset & ~0x1FFF)
  with raises(errno.EINVAL, call, "doorbell page's offset"): rig.driver.mmap(0, kfd.DOORBELLS_SIZE, RW, kfd.MAP_SHARED, rig.kfd, 0)
  with raises(errno.EINVAL, call, "doorbell page's offset"): rig.driver.mmap(0, kfd.DOORBELLS_SIZE, RW, kfd.MAP_SHARED, rig.kfd, sdma.doorbell_offset)
  with raises(errno.EINVAL, call, "MAP_FIXED"):
    rig.driver.mmap(PAGE, kfd.DOORBELLS_SIZE, RW, kfd.MAP_SHARED | kfd.MAP_FIXED, rig.kfd, sdma.doorbell_offset & ~0x1FFF)
  with raises(errno.EINVAL, call, "no GPU"): rig.driver.mmap(0, kfd.DOORBELLS_SIZE, RW, kfd.MAP_SHARED, rig.kfd, kfd.MMAP_TYPE_DOORBELL | 7 << 46)
  with raises(errno.EINVAL, "ACQUIRE_VM first"):
    rig.driver.mmap(0, kfd.DOORBELLS_SIZE, RW, kfd.MAP_SHARED, rig.kfd, kfd.MMAP_TYPE_DOORBELL | GFX1100 << kfd.MMAP_GPU_ID_SHIFT)
  queues = len(rig.driver.queues)
  rig.driver.engine_factory = lambda queue: 1 / 0
  with pytest.raises(ZeroDivisionError): rig.queue()
  assert len(rig.driver.queues) == queues  # a failed engine leaves no queue behind
  rig.driver.engine_factory = None
  monkeypatch.setattr(mock_driver, "ENGINE_MODULE", "pytc.runtime.amd.no_such_engines")
  with raises(errno.ENOSYS, "pytc.runtime.amd.no_such_engines"): rig.queue()
