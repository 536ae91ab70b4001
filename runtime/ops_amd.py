"""The AMD device: an AMD GPU driven through KFD with command buffers pytc encodes itself (no ROCm runtime in the launch
path).

- Names: "AMD" / "AMD:<n>" open the n-th GPU of `/dev/kfd`; "AMD:MOCK" / "AMD:MOCK:<n>" the MOCK driver's (0: a gfx1100,
  1: a gfx942), which executes every packet this device writes on the CPU (and on the gfx1100 the kernels' machine
  code). The MOCK is only ever chosen by name.
- Memory: tensors in VRAM; host-visible memory for rings, signals, kernel arguments and staging (runtime/amd/gpu.py).
  copyin/copyout go through 2 MiB staging buffers (each held by one thread at a time) and the SDMA copy queue, transfers
  through the copy queue alone. For command graphs (runtime/graph.py): `staging(n)` gives host-visible memory for a copy
  to or from host memory, and `reaches` maps another AMD GPU's buffer for this one so this one's copy queue reads it.
- Programs: pytc's code objects (HSACO), their loaded image copied to VRAM with the relocations applied, each kernel's
  descriptor turned into its COMPUTE_PGM_RSRC1/2/3 values and LDS size; the one user-data pair is the kernarg pointer.
  On the MOCK, a binary also carries the kernels' CPU emulation, handed to the MOCK GPU by code address.
- Kernel arguments: blocks of a host-visible arena, reused only once the timeline shows that the last submission before
  their release finished (a TinyJit capture keeps its blocks and patches their pointers for a replay).
- Queues: `queue()` builds PM4 for the compute ring, `copy_queue()` SDMA for the copy ring (runtime/amd/queues.py); both
  signal the one timeline, and a submission to one ring waits for the timeline value the other ring was last given (a
  command graph's buffers signal the timeline only at its end, so within it the rings wait only where its steps do).
- Waits: a host wait polls, then sleeps in KFD's WAIT_EVENTS on the device's interrupt, memory-fault and
  hardware-exception events. A memory fault stops the device: waiters raise DeviceError naming the faulting address;
  `reset()` makes new queues.
"""

from __future__ import annotations

import ctypes
import dataclasses
import threading
import weakref
from collections import defaultdict, deque
from dataclasses import replace
from typing import Any

from pytc.helpers import DEBUG
from pytc.runtime.amd import kfd, pm4, sdma
from pytc.runtime.amd.gpu import KFDGPU, PAGE, Memory, round_up
from pytc.runtime.amd.queues import ComputeQueue, CopyQueue, Ring
from pytc.runtime.amd_code_object import parse as parse_code_object
from pytc.runtime.device import Allocator, Binary, Compiled, HCQDevice, Kernel, KernelInfo, LaunchArgs, Program
from pytc.runtime.hcq import SUBMIT_LOCK, DeviceError, Signal, show
from pytc.runtime.target import Target, gpu_target, host_cpu

STAGING_BYTES, STAGING_BUFFERS = 2 << 20, 4
KERNARG_CHUNK = 1 << 20
COMPUTE_RING, COPY_RING = 1 << 20, 1 << 18
TICK_NS = 10  # the GPU clock a timestamp reads runs at 100 MHz
MOCK_BUNDLE = b"PYTCMOCK"  # a MOCK binary: this, the code object's length (u64), the code object, the emulation library
KERNARG_POINTER = 1 << 3  # kernel_code_properties: ENABLE_SGPR_KERNARG_SEGMENT_PTR
WAVE32 = 1 << 10
R_AMDGPU_ABS64, R_AMDGPU_REL64, R_AMDGPU_RELATIVE64 = 1, 5, 13


def mock_target(arch: str) -> Target:
  """The MOCK GPU's target: the chip's, its binaries also holding the kernels compiled for this host (their CPU
  emulation)."""
  return replace(gpu_target(arch), features=("mock", *host_cpu().features))


def split_mock_binary(code: bytes) -> tuple[bytes, bytes]:
  """(code object, emulation library) of a MOCK binary; ValueError for anything else."""
  if code[:8] != MOCK_BUNDLE or len(code) < 16:
    raise ValueError("not a MOCK binary (a code object with its CPU emulation)")
  length = int.from_bytes(code[8:16], "little")
  if 16 + length > len(code):
    raise ValueError("a MOCK binary whose code object runs past its end")
  return code[16 : 16 + length], code[16 + length :]


class AMDSignal(Signal):
  """A 16-byte slot of the device's signal memory (host-visible, mapped for the GPU); timestamps are 100 MHz GPU
  ticks."""

  def __init__(self, device: AMDDevice, value: int = 0):
    super().__init__(value, device, device.signal_slot())
    weakref.finalize(self, device.free_slots.append, self.address).atexit = False

  @property
  def timestamp_ns(self) -> int:
    return super().timestamp_ns * TICK_NS


@dataclasses.dataclass(frozen=True)
class Interrupt:
  """The KFD event the timeline's writes raise: its id, and the mailbox slot the queue writes it to."""

  event_id: int
  mailbox: int


class AMDBuffer:
  """`nbytes` of VRAM at `address`."""

  def __init__(self, memory: Memory, nbytes: int):
    self.memory, self.address, self.nbytes = memory, memory.address, nbytes


class Retired:
  """Freed pieces of memory by size, each reusable once the timeline has reached the value submitted before it was freed
  (what may still use it has finished). Values are taken in submission order: a piece waits behind those freed before
  it."""

  def __init__(self, device: AMDDevice):
    self.device, self.lock, self.ready, self.waiting = device, threading.Lock(), defaultdict(list), deque()

  def put(self, size: int, piece: Any) -> None:
    with self.lock:
      self.waiting.append((self.device.timeline_value, size, piece))

  def take(self, size: int) -> Any:
    """A piece of `size` that nothing uses any more, or None."""
    with self.lock:
      reached = self.device.timeline.value
      while self.waiting and self.waiting[0][0] <= reached:
        _, done, piece = self.waiting.popleft()
        self.ready[done].append(piece)
      return self.ready[size].pop() if self.ready[size] else None


class AMDAllocator(Allocator):
  """VRAM; freed memory is kept for reuse by size once the work submitted before the free has finished."""

  def __init__(self, device: AMDDevice):
    self.device, self.retired, self.retired_host = device, Retired(device), Retired(device)
    # staging buffers not in use, each with the timeline value of the last copy that used it; a thread holds one from
    # the copy into it until it is done with it (more are made when every one is held)
    self.staging_buffers = [(device.gpu.alloc(STAGING_BYTES, host=True), 0) for _ in range(STAGING_BUFFERS)]
    self.staging_lock = threading.Lock()

  def alloc(self, nbytes: int) -> AMDBuffer:
    size = round_up(max(nbytes, 1), PAGE)
    return AMDBuffer(self.retired.take(size) or self.device.gpu.alloc(size, host=False), nbytes)

  def free(self, buffer: AMDBuffer) -> None:
    self.retired.put(buffer.memory.size, buffer.memory)

  def _staging(self) -> Memory:
    """A staging buffer held by the caller alone (give it back with `_release`), once the copies that last used it
    finished."""
    with self.staging_lock:
      staging, last_use = (
        self.staging_buffers.pop() if self.staging_buffers else (self.device.gpu.alloc(STAGING_BYTES, host=True), 0)
      )
    self.device.timeline.wait(last_use)
    return staging

  def _release(self, staging: Memory, last_use: int) -> None:
    with self.staging_lock:
      self.staging_buffers.append((staging, last_use))

  def _copy(self, destination: int, source: int, nbytes: int) -> int:
    with SUBMIT_LOCK:
      value = self.device.next_timeline_value()
      self.device.copy_queue().copy(destination, source, nbytes).signal(self.device.timeline, value).submit(self.device)
    return value

  def copyin(self, buffer: AMDBuffer, data: memoryview) -> None:
    if len(data) != buffer.nbytes:
      raise ValueError(f"copyin of {len(data)} bytes into a {buffer.nbytes}-byte buffer")
    for offset in range(0, len(data), STAGING_BYTES):
      chunk = data[offset : offset + STAGING_BYTES]
      staging = self._staging()
      staging.view(0, len(chunk))[:] = chunk
      self._release(staging, self._copy(buffer.address + offset, staging.address, len(chunk)))

  def copyout(self, destination: memoryview, buffer: AMDBuffer) -> None:
    if len(destination) != buffer.nbytes:
      raise ValueError(f"copyout of a {buffer.nbytes}-byte buffer into {len(destination)} bytes")
    for offset in range(0, buffer.nbytes, STAGING_BYTES):
      size = min(STAGING_BYTES, buffer.nbytes - offset)
      staging = self._staging()
      try:
        self.device.timeline.wait(self._copy(staging.address, buffer.address + offset, size))
        destination[offset : offset + size] = staging.view(0, size)
      finally:
        self._release(staging, 0)

  def transfer(self, destination: AMDBuffer, source: AMDBuffer, nbytes: int) -> None:
    if nbytes > min(destination.nbytes, source.nbytes):
      raise ValueError(
        f"transfer of {nbytes} bytes from a {source.nbytes}-byte buffer into a {destination.nbytes}-byte one"
      )
    if nbytes:
      self._copy(destination.address, source.address, nbytes)

  def reaches(self, device: Compiled, buffer: Any) -> bool:
    """Whether this GPU's copy queue reads `buffer` of `device`: VRAM of another AMD GPU of this driver (mapped for this
    one now, once)."""
    if not isinstance(device, AMDDevice) or device.gpu.driver is not self.device.gpu.driver or device is self.device:
      return False
    self.device.gpu.map_peer(buffer.memory)
    return True

  def staging(self, nbytes: int) -> Memory:
    """Host-visible memory of at least `nbytes` for copies between host memory and VRAM."""
    size = round_up(max(nbytes, 1), PAGE)
    return self.retired_host.take(size) or self.device.gpu.alloc(size, host=True)

  def free_staging(self, memory: Memory) -> None:
    self.retired_host.put(memory.size, memory)


class KernargArena:
  """Host-visible memory for kernel arguments, in 1 MiB chunks cut into 64-byte aligned blocks. A released block is
  reused only once the timeline has reached the value submitted before its release (what may still read it has
  finished)."""

  def __init__(self, device: AMDDevice):
    self.device, self.chunks, self.lock, self.retired = device, [], threading.Lock(), Retired(device)
    self.top = self.end = 0

  def alloc(self, size: int) -> int:
    size = round_up(max(size, 1), 64)
    if (address := self.retired.take(size)) is not None:
      return address
    with self.lock:
      if self.top + size > self.end:
        chunk = self.device.gpu.alloc(max(KERNARG_CHUNK, size), host=True)
        self.chunks.append(chunk)
        self.top, self.end = chunk.address, chunk.address + chunk.size
      self.top += size
      return self.top - size

  def release(self, address: int, size: int) -> None:
    self.retired.put(round_up(max(size, 1), 64), address)


HIDDEN = {
  "hidden_block_count_x": lambda a: a.global_size[0],
  "hidden_block_count_y": lambda a: a.global_size[1],
  "hidden_block_count_z": lambda a: a.global_size[2],
  "hidden_group_size_x": lambda a: a.local_size[0],
  "hidden_group_size_y": lambda a: a.local_size[1],
  "hidden_group_size_z": lambda a: a.local_size[2],
}


class AMDArgs(LaunchArgs):
  """A kernarg block: each buffer's device address at the offset the code object gives it, the implicit arguments it
  asks for (grid and workgroup sizes); the rest zero."""

  def __init__(self, kernel: AMDKernel, buffers: list[AMDBuffer]):
    if len(buffers) != len(kernel.pointers):
      raise ValueError(f"kernel {kernel.name} takes {len(kernel.pointers)} buffers, not {len(buffers)}")
    self.kernel, self.global_size, self.local_size = kernel, (kernel.grid, 1, 1), (kernel.local, 1, 1)
    arena = kernel.device.kernargs
    self.address = arena.alloc(kernel.kernarg_size)
    weakref.finalize(self, arena.release, self.address, kernel.kernarg_size).atexit = False
    ctypes.memset(self.address, 0, kernel.kernarg_size)
    for offset, buffer in zip(kernel.pointers, buffers):
      ctypes.c_uint64.from_address(self.address + offset).value = buffer.address
    for offset, size, kind in kernel.hidden:
      ctypes.memmove(self.address + offset, HIDDEN[kind](self).to_bytes(size, "little"), size)

  def set(self, position: int, buffer: AMDBuffer) -> None:
    ctypes.c_uint64.from_address(self.address + self.kernel.pointers[position]).value = buffer.address


class AMDKernel(Kernel):
  """A loaded kernel: its code address and resource registers, its kernarg layout, the launch its mapping chose."""

  def __init__(self, device: AMDDevice, info: KernelInfo, code: Any, base: int):
    self.device, self.name, self.grid, self.local = device, info.name, info.sizes["grid"], info.sizes["local"]
    d = code.descriptor
    # gfx11 pads the count (its user-SGPR bug)
    if d.kernel_code_properties & ~(KERNARG_POINTER | WAVE32) or d.user_sgpr_count < 2:
      raise ValueError(
        f"kernel {info.name} asks for user SGPRs beyond the kernarg pointer (properties "
        f"{d.kernel_code_properties:#x}): "
        "pytc sets up only that one"
      )
    if code.reqd_workgroup_size not in (None, (self.local, 1, 1)):
      raise ValueError(
        f"kernel {info.name} was compiled for workgroups of {code.reqd_workgroup_size}, not {self.local} threads"
      )
    lds = -(-d.group_segment_fixed_size // 512)
    if lds * 512 > device.gpu.properties.get("lds_size_in_kb", 64) * 1024:
      raise ValueError(f"kernel {info.name} needs {d.group_segment_fixed_size} bytes of LDS, more than the GPU has")
    self.entry = self.code_address = base + code.code_address
    self.wave32 = d.wave32
    # gfx11: PRIV, as the driver expects
    self.rsrc1 = d.compute_pgm_rsrc1 | (1 << 20 if device.family == pm4.GFX11 else 0)
    self.rsrc2, self.rsrc3 = d.compute_pgm_rsrc2 | (lds & 0x1FF) << 15, d.compute_pgm_rsrc3
    self.pointers = [a.offset for a in code.args if a.value_kind == "global_buffer"]
    self.hidden = [(a.offset, a.size, a.value_kind) for a in code.args if a.value_kind in HIDDEN]
    self.kernarg_size = max(code.kernarg_segment_size, d.kernarg_size, 8)
    device.scratch.ensure(d.private_segment_fixed_size)

  def args(self, buffers: list[AMDBuffer]) -> AMDArgs:
    return AMDArgs(self, buffers)


def relocate(image: bytearray, code_object: Any, base: int) -> None:
  """Apply the code object's dynamic relocations for an image loaded at `base`."""
  symbols = {s.name: s.value for s in code_object.symbols if s.section}
  for r in code_object.relocations:
    if r.type == R_AMDGPU_RELATIVE64:
      value = base + r.addend
    elif r.type in (R_AMDGPU_ABS64, R_AMDGPU_REL64) and r.symbol in symbols:
      value = base + symbols[r.symbol] + r.addend - (base + r.offset if r.type == R_AMDGPU_REL64 else 0)
    else:
      raise ValueError(f"code object relocation of type {r.type} against '{r.symbol}' is not one pytc applies")
    image[r.offset : r.offset + 8] = (value & (1 << 64) - 1).to_bytes(8, "little")


class AMDProgram(Program):
  """A code object loaded into VRAM (freed with the Program, once the work submitted before has finished)."""

  def __init__(self, device: AMDDevice, binary: Binary):
    super().__init__(device, binary)
    if not binary.kernels:
      return
    code, emulation = split_mock_binary(binary.code) if device.mock else (binary.code, b"")
    code_object = parse_code_object(code)
    if code_object.arch != device.target.arch:
      raise ValueError(f"{device.name} runs {device.target.arch} code, not a code object for {code_object.arch}")
    image = bytearray(code_object.image())
    self.buffer = device.allocator.alloc(len(image))
    relocate(image, code_object, self.buffer.address)
    device.allocator.copyin(self.buffer, memoryview(image[: self.buffer.nbytes]))
    weakref.finalize(self, device.allocator.free, self.buffer).atexit = False
    for info in binary.kernels:
      if (kernel := code_object.kernels.get(info.name)) is None:
        raise ValueError(f"the AMD code object has no kernel {info.name}")
      self.kernels[info.name] = AMDKernel(device, info, kernel, self.buffer.address)
    if device.mock:
      from pytc.runtime.amd.mock_gpu import Emulations

      self.emulation = Emulations(
        device.gpu.driver.gpus[device.gpu.gpu_id], code, self.buffer.address, emulation, binary.kernels
      )


class Scratch:
  """Per-thread private memory for kernels that spill (none of pytc's so far): allocated on the first kernel that needs
  it, grown for a larger one; `tmpring` is the COMPUTE_TMPRING_SIZE value describing it."""

  def __init__(self, device: AMDDevice):
    self.device, self.address, self.tmpring, self.per_thread, self.memory = device, 0, 0, 0, None

  def ensure(self, per_thread: int) -> None:
    if per_thread <= self.per_thread:
      return
    p, gfx9 = self.device.gpu.properties, self.device.family == pm4.GFX9
    align = 1024 if gfx9 else 256
    per_thread = round_up(per_thread, align // 64)
    cus = p["simd_count"] // p["simd_per_cu"]
    slots = cus * p.get("max_slots_scratch_cu", 32)
    wave_bytes = round_up(64 * per_thread, align)
    # the old area is leaked to work that may still use it
    self.memory = self.device.gpu.alloc(wave_bytes * slots, host=False)
    engines = 1 if gfx9 else max(1, p["array_count"] // p["simd_arrays_per_engine"])
    self.address, self.per_thread = self.memory.address, per_thread
    self.tmpring = min(slots // engines, 0xFFF) | (wave_bytes // align) << 12


class AMDDevice(HCQDevice):
  """An AMD GPU: a PM4 compute queue, an SDMA copy queue, one timeline signal counting finished submissions. A fault
  stops it until reset(), which makes new queues."""

  def __init__(self, name: str = "AMD"):
    parts = name.upper().split(":")[1:]
    self.mock = bool(parts) and parts[0] == "MOCK"
    index = parts[1 if self.mock else 0] if len(parts) > int(self.mock) else "0"
    if not index.isdigit() or len(parts) > 1 + int(self.mock):
      raise ValueError(f"bad AMD device name '{name}' (AMD, AMD:<n>, AMD:MOCK, AMD:MOCK:<n>)")
    if self.mock:
      from pytc.runtime.amd.mock_driver import mock_driver

      driver = mock_driver()
    else:
      driver = kfd.HostDriver()
    self.gpu = gpu = KFDGPU(driver, int(index))
    try:
      target = mock_target(gpu.arch) if self.mock else gpu_target(gpu.arch)
    except ValueError:
      raise RuntimeError(f"{name} is a {gpu.arch}, which pytc does not compile for") from None
    compiler = "pytc.compilers.amd_mock:AMDMockCompiler" if self.mock else "pytc.compilers.gpu:AMDGPUCompiler"
    self.family, self.sdma_version = pm4.family(gpu.arch), sdma.sdma_version(gpu.arch)
    self.free_slots: list[int] = []
    self.signal_pages: list[Memory] = []
    event = gpu.create_event(kfd.EVENT_SIGNAL)
    self.interrupt = Interrupt(event.event_id, gpu.event_page().address + 8 * event.event_slot_index)
    self.fault_events = self._fault_events()
    super().__init__(name, AMDAllocator(self), target, compiler, AMDProgram)
    self.kernargs, self.scratch = KernargArena(self), Scratch(self)
    self.queues: list[int] = []
    self.submitting = threading.Lock()  # one submission at a time: its wait for the other ring, its packets, `waited`
    self.restart_queues()

  def _queue(self, queue_type: int, ring_bytes: int) -> Ring:
    gpu = self.gpu
    ring, pointers = gpu.alloc(ring_bytes, host=True), gpu.alloc(PAGE, host=True)
    ctypes.memset(pointers.address, 0, PAGE)
    eop = context = None
    if queue_type == kfd.QUEUE_COMPUTE:
      eop = gpu.alloc(PAGE, host=False)
      size, save_size, stack_size = gpu.context_save_area()
      context = (gpu.alloc(size, host=False), save_size, stack_size)
    queue_id, doorbell = gpu.create_queue(queue_type, ring, pointers, eop, context)
    self.queues.append(queue_id)
    return Ring(gpu.driver, ring, pointers, doorbell, 4 if queue_type == kfd.QUEUE_COMPUTE else 1)

  def restart_queues(self) -> None:
    """New compute and copy queues (the old ones destroyed, with what they held); each ring starts having seen the
    timeline's last value."""
    with self.submitting:
      for queue_id in self.queues:
        self.gpu.destroy_queue(queue_id)
      self.queues = []
      self.compute, self.copy = self._queue(kfd.QUEUE_COMPUTE, COMPUTE_RING), self._queue(kfd.QUEUE_SDMA, COPY_RING)
      # per ring: the last timeline value submitted to it or that it waited for
      self.waited = {id(self.compute): self.timeline_value, id(self.copy): self.timeline_value}

  def unfinished_work(self) -> str | None:
    if self.timeline.value >= self.timeline_value:
      return None
    return f"{self.name}: dropped submitted work that did not finish"

  # ***** signals *****

  def signal_slot(self) -> int:
    if not self.free_slots:
      page = self.gpu.alloc(PAGE, host=True)
      self.signal_pages.append(page)
      self.free_slots.extend(range(page.address + PAGE - 16, page.address - 1, -16))
    return self.free_slots.pop()

  def new_signal(self, value: int = 0) -> AMDSignal:
    return AMDSignal(self, value)

  def next_timeline_value(self) -> int:
    value = super().next_timeline_value()
    if value >= 1 << 31:
      raise DeviceError(f"{self.name}: the timeline reached 2**31 (the GPU compares 32 bits); reopen the device")
    return value

  # ***** queues *****

  def queue(self) -> ComputeQueue:
    return ComputeQueue(self)

  def copy_queue(self) -> CopyQueue:
    return CopyQueue(self)

  def _ordered(self, ring: Ring, wait: Any) -> Any:
    """The wait a submission to `ring` starts with: the timeline value the other ring was last given, when `ring` has
    not seen it."""
    other = self.copy if ring is self.compute else self.compute
    needed = self.waited[id(other)]
    if needed <= self.waited[id(ring)]:
      return None
    self.waited[id(ring)] = needed
    return wait(self.timeline, needed)

  def submit(self, command_buffer: bytes) -> None:
    """Write a PM4 command buffer (from `queue()`) to the compute ring and ring its doorbell."""
    if len(command_buffer) % 4:
      raise ValueError(f"a PM4 command buffer is whole dwords, not {len(command_buffer)} bytes")
    self.admit()
    with self.submitting:
      before = self._ordered(self.compute, lambda s, v: ComputeQueue(self).wait(s, v).bytes())
      if DEBUG >= 5:
        show(
          self.name,
          "PM4",
          pm4.with_register_names(
            pm4.decode(memoryview((before or b"") + command_buffer).cast("I"), self.family), self.family
          ),
        )
      self.compute.submit_words((before or b"") + command_buffer)
      self.waited[id(self.compute)] = self.timeline_value

  def submit_copy(self, packets: list[list[int]]) -> None:
    """Write SDMA packets (from `copy_queue()`) to the copy ring and ring its doorbell."""
    self.admit()
    with self.submitting:
      before = self._ordered(self.copy, lambda s, v: CopyQueue(self).wait(s, v).packets)
      if DEBUG >= 5:
        show(
          self.name,
          "SDMA",
          sdma.decode([word for packet in (before or []) + packets for word in packet], self.sdma_version),
        )
      self.copy.submit_packets((before or []) + packets)
      self.waited[id(self.copy)] = self.timeline_value

  # ***** waiting and faults *****

  def _fault_events(self) -> list[int]:
    """New memory-fault and hardware-exception events (they stay fired once fired: a fault already seen needs new
    ones)."""
    return [self.gpu.create_event(kfd.EVENT_MEMORY).event_id, self.gpu.create_event(kfd.EVENT_HW_EXCEPTION).event_id]

  def sleep(self, seconds: float) -> None:
    """Block in KFD until the timeline's interrupt, a memory fault or a hardware exception (or `seconds` pass); a fault
    stops the device."""
    fired = self.gpu.wait_events([self.interrupt.event_id, *self.fault_events], max(1, int(seconds * 1000)))
    if any(data.memory_exception_data.gpu_id or data.hw_exception_data.gpu_id for data in fired[1:]):
      self.fault_events = self._fault_events()
    for data in fired[1:]:
      memory, hardware = data.memory_exception_data, data.hw_exception_data
      if memory.gpu_id == self.gpu.gpu_id:
        kind = (
          "page not present"
          if memory.failure_not_present
          else "write to read-only memory"
          if memory.failure_read_only
          else "access refused"
        )
        fault = f"GPU memory fault in the page at address {memory.va:#x} ({kind}){self.mock_detail()}"
        self.stop(self.epoch, f"{self.name}: {fault}; the device stopped: reset() it")
      elif hardware.gpu_id == self.gpu.gpu_id:
        exception = f"GPU hardware exception (reset type {hardware.reset_type}){self.mock_detail()}"
        self.stop(self.epoch, f"{self.name}: {exception}; the device stopped: reset() it")

  def mock_detail(self) -> str:
    """What the MOCK recorded of the last fault (real KFD reports only its kind and address)."""
    faults = self.gpu.driver.gpus[self.gpu.gpu_id].faults if self.mock else []
    return f": {faults[-1][1]}" if faults else ""
