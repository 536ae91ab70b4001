"""The AMD device's command buffers and the rings they are submitted through.

`ComputeQueue` builds PM4 for the compute ring: a launch is the cache invalidation a dispatch needs, the program,
resource, scratch and user-data registers, the workgroup size, DISPATCH_DIRECT and a partial flush; a signal is a
RELEASE_MEM at the end of the pipe (with a second one that raises the device's interrupt when the timeline is written);
a wait is a WAIT_REG_MEM on the signal's low 32 bits; a timestamp drains the pipe and writes the GPU clock; a memory
barrier flushes the host data path and invalidates every cache. `CopyQueue` builds SDMA packets for the copy ring.
`Ring` writes finished command buffers into a ring and rings its doorbell."""

from __future__ import annotations

import ctypes
import struct
import threading
import time
from typing import Any

from pytc import flags
from pytc.runtime.amd import pm4, sdma
from pytc.runtime.amd.gpu import Memory
from pytc.runtime.hcq import Signal, SignalTimeout

EVENT_INDEX_CS_PARTIAL_FLUSH = 4


class ComputeQueue:
  """A PM4 command buffer for `device`'s compute ring; each method appends and returns the queue for chaining."""

  def __init__(self, device: Any):
    self.device, self.family, self.words = device, device.family, []
    self.registers = pm4.registers(self.family)

  def _signal_write(self, address: int, value: int) -> None:
    self.words += pm4.release_mem(self.family, address, value, data="value64")

  def exec(self, kernel: Any, args: Any) -> ComputeQueue:
    """Launch `kernel` (an AMDKernel) over `args` (its AMDArgs: kernarg address, grid and workgroup size)."""
    r, f = self.registers, self.family
    if 0 in args.global_size:
      return self  # an empty grid (a tensor with a zero dimension): nothing to run
    self.words += pm4.acquire_mem(f, caches="dispatch")
    self.words += pm4.set_sh_reg(r.pgm_lo, (kernel.code_address >> 8) & 0xFFFFFFFF, kernel.code_address >> 40)
    self.words += pm4.set_sh_reg(r.rsrc1, kernel.rsrc1, kernel.rsrc2)
    self.words += pm4.set_sh_reg(r.rsrc3, kernel.rsrc3)
    self.words += pm4.set_sh_reg(r.tmpring_size, self.device.scratch.tmpring)
    if scratch := self.device.scratch.address:
      self.words += pm4.set_sh_reg(r.scratch_base_lo, (scratch >> 8) & 0xFFFFFFFF, scratch >> 40)
    self.words += pm4.set_sh_reg(r.restart_x, 0, 0, 0)
    self.words += pm4.set_sh_reg(r.user_data_0, args.address & 0xFFFFFFFF, args.address >> 32)
    self.words += pm4.set_sh_reg(r.resource_limits, 0)
    self.words += pm4.set_sh_reg(r.start_x, 0, 0, 0, *args.local_size, 0, 0)
    self.words += pm4.dispatch_direct(*args.global_size, pm4.dispatch_initiator(f, kernel.wave32))
    self.words += pm4.event_write(pm4.CS_PARTIAL_FLUSH, EVENT_INDEX_CS_PARTIAL_FLUSH)
    return self

  def signal(self, signal: Signal, value: int) -> ComputeQueue:
    """After everything before it finished (caches written back), the signal's value becomes `value`; on the timeline,
    the device's interrupt event fires too, so a sleeping host wait wakes."""
    self.words += pm4.release_mem(self.family, signal.address, value, data="value64")
    if signal is self.device.timeline or signal.wakes_host:
      event = self.device.interrupt
      self.words += pm4.release_mem(
        self.family,
        event.mailbox,
        event.event_id,
        data="value32",
        interrupt=2,
        ctxid=event.event_id if self.family != pm4.GFX9 else 0,
        flush=False,
      )
    return self

  def wait(self, signal: Signal, value: int) -> ComputeQueue:
    self.words += pm4.wait_reg_mem(signal.address, value & 0xFFFFFFFF)
    return self

  def timestamp(self, signal: Signal) -> ComputeQueue:
    self.words += pm4.release_mem(self.family, 0, data="none", flush=False)
    self.words += pm4.release_mem(self.family, signal.address + 8, data="timestamp", flush=False)
    self.words += pm4.acquire_mem(self.family, caches="all")
    return self

  def memory_barrier(self) -> ComputeQueue:
    self.words += pm4.hdp_flush(self.family) + pm4.acquire_mem(self.family, caches="all")
    return self

  def copy(self, destination: int, source: int, nbytes: int) -> ComputeQueue:
    raise NotImplementedError("AMD copies run on the SDMA queue (the device's copy_queue()), not the compute queue")

  def bytes(self) -> bytes:
    return struct.pack(f"<{len(self.words)}I", *self.words)

  def submit(self, device: Any) -> ComputeQueue:
    device.submit(self.bytes())
    return self


class CopyQueue:
  """SDMA packets for `device`'s copy ring (kept as whole packets: the ring never splits one)."""

  def __init__(self, device: Any):
    self.device, self.version, self.packets = device, device.sdma_version, []

  def copy(self, destination: int, source: int, nbytes: int) -> CopyQueue:
    words, length = sdma.copy(destination, source, nbytes, self.version), sdma.LENGTHS[sdma.COPY]
    self.packets += [words[i : i + length] for i in range(0, len(words), length)]
    return self

  def signal(self, signal: Signal, value: int) -> CopyQueue:
    self.packets.append(sdma.fence(signal.address, value & 0xFFFFFFFF, self.version))
    if signal is self.device.timeline or signal.wakes_host:
      event = self.device.interrupt
      self.packets += [sdma.fence(event.mailbox, event.event_id, self.version), sdma.trap(event.event_id)]
    return self

  def wait(self, signal: Signal, value: int) -> CopyQueue:
    self.packets.append(sdma.poll_regmem(signal.address, value & 0xFFFFFFFF))
    return self

  def timestamp(self, signal: Signal) -> CopyQueue:
    self.packets.append(sdma.timestamp(signal.address + 8))
    return self

  def submit(self, device: Any) -> CopyQueue:
    device.submit_copy(self.packets)
    return self


class Ring:
  """A hardware queue's ring: `memory` (a power of two bytes), the read and write pointers the GPU and the host share
  (u64 at bytes 128 and 56 of `pointers`, counting dwords for PM4 and bytes for SDMA since the queue was created), its
  doorbell."""

  def __init__(self, driver: Any, memory: Memory, pointers: Memory, doorbell: int, unit: int):
    self.driver, self.memory, self.doorbell, self.unit = driver, memory, doorbell, unit
    self.capacity = memory.size // unit
    self.read = ctypes.c_uint64.from_address(pointers.address + 128)
    self.write_pointer = ctypes.c_uint64.from_address(pointers.address + 56)
    self.put, self.lock = 0, threading.Lock()

  def _room(self, units: int) -> None:
    """Wait until `units` more fit behind what the GPU has not read yet (a GPU stuck on a wait never makes room)."""
    if self.put + units - self.read.value <= self.capacity:
      return
    self._kick()  # what is written so far goes to the GPU, which makes the room
    deadline = time.perf_counter() + flags.WAIT_TIMEOUT.value
    while self.put + units - self.read.value > self.capacity:
      if time.perf_counter() > deadline:
        raise SignalTimeout(f"the ring at {self.memory.address:#x} stayed full (the GPU stopped reading it)")
      time.sleep(0.0001)

  def _store(self, data: bytes) -> None:
    """Copy `data` (whole units) to the ring at the write position, wrapping at its end."""
    start, size = self.put % self.capacity * self.unit, len(data)
    first = min(size, self.memory.size - start)
    ctypes.memmove(self.memory.address + start, data, first)
    if first < size:
      ctypes.memmove(self.memory.address, data[first:], size - first)
    self.put += size // self.unit

  def _kick(self) -> None:
    self.write_pointer.value = self.put
    self.driver.write_doorbell(self.doorbell, self.put)

  def submit_words(self, data: bytes) -> None:
    """PM4: packets may wrap around the ring's end; a buffer larger than the ring goes in pieces as the GPU reads."""
    with self.lock:
      piece = self.capacity // 2 * self.unit
      for offset in range(0, len(data), piece):
        chunk = data[offset : offset + piece]
        self._room(len(chunk) // self.unit)
        self._store(chunk)
        self._kick()

  def submit_packets(self, packets: list[list[int]]) -> None:
    """SDMA: no packet crosses the ring's end (the tail is filled with NOPs, zero dwords, and the packet starts over at
    0)."""
    with self.lock:
      for packet in packets:
        data = struct.pack(f"<{len(packet)}I", *packet)
        tail = self.capacity - self.put % self.capacity
        if len(data) > tail:
          self._room(tail)
          self._store(bytes(tail))
        self._room(len(data))
        self._store(data)
      self._kick()
