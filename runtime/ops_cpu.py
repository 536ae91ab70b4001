"""The CPU device: host memory buffers, JIT-compiled programs, and a compute queue whose worker
thread executes HCQ command buffers, so the host keeps running while kernels execute (a buffer that
finds the queue idle and waits on no signal runs at once on the submitting thread)."""
from __future__ import annotations

import ctypes
import os
import queue
import threading
import time
from collections.abc import Iterable

import numpy as np

from pytc.helpers import getenv
from pytc.runtime.hcq import DeviceError, HWQueue, Op, Packet, Signal, SignalTimeout, decode
from pytc.runtime.workers import Workers

KERNEL_ABI = ctypes.CFUNCTYPE(None, ctypes.c_void_p)  # the packed `void(void **args)` entry of a kernel


class CPUBuffer:
  """`nbytes` of host memory, 64-byte aligned (uninitialized, like device memory)."""
  def __init__(self, nbytes: int):
    self.nbytes, self.borrowed = nbytes, False
    self._memory: object = np.empty(nbytes + 64, dtype=np.uint8)
    self.address: int = (self._memory.ctypes.data + 63) & ~63

  @classmethod
  def wrap(cls, address: int, nbytes: int, owner: object = None) -> CPUBuffer:
    """Host memory someone else owns (kept alive through `owner`), used in place and never recycled."""
    buffer = cls.__new__(cls)
    buffer.nbytes, buffer.borrowed, buffer._memory, buffer.address = nbytes, True, owner, address
    return buffer

  def as_memoryview(self) -> memoryview:
    return memoryview((ctypes.c_uint8 * self.nbytes).from_address(self.address)).cast("B")

  def copyin(self, data: bytes | memoryview) -> None:
    if len(data) != self.nbytes: raise ValueError(f"copyin of {len(data)} bytes into a {self.nbytes}-byte buffer")
    self.as_memoryview()[:] = data

  def copyout(self) -> bytes: return self.as_memoryview().tobytes()


class Kernargs:
  """The argument block of one launch: its argument count, then a `void*` per argument (what the kernel's packed entry
  takes), each pointing at a slot that holds the value. A kernel's last two arguments are the [begin, end) of its
  outermost parallel range."""
  def __init__(self, values: list[int]):
    self.count = n = len(values)
    self._memory = (ctypes.c_uint64 * (1 + 2 * n))(n)
    base = ctypes.addressof(self._memory)
    for i, value in enumerate(values): self._memory[1 + i], self._memory[1 + n + i] = base + 8 * (1 + n + i), value
    self.address: int = base

  def set(self, position: int, value: int) -> None:
    """Patch one argument's value (a replayed launch on new buffers)."""
    self._memory[1 + self.count + position] = value

  @staticmethod
  def values_at(address: int) -> list[int]:
    count = ctypes.c_uint64.from_address(address).value
    return list((ctypes.c_uint64 * count).from_address(address + 8 * (1 + count)))


class CPUQueue:
  """Executes submitted command buffers in order on one worker thread. A buffer submitted while the queue is
  idle, and that waits on no signal, runs at once on the submitting thread instead (still in order: nothing is
  queued or running), which saves the two thread hand-offs of a round trip through the worker."""
  def __init__(self, device: CPUDevice, name: str):
    self.device, self._pending = device, queue.SimpleQueue()
    self._entries: dict[int, ctypes._CFuncPtr] = {}
    self._state, self._executing, self._outstanding = threading.Lock(), threading.Lock(), 0
    threading.Thread(target=self._run, name=f"{device.name}:{name}", daemon=True).start()

  def submit(self, command_buffer: bytes) -> None:
    try: packets = list(decode(command_buffer))
    except ValueError: packets = None  # malformed: the worker reports it as a device error
    with self._state:
      inline = self._outstanding == 0 and packets is not None and not any(packet.op is Op.WAIT for packet in packets)
      self._outstanding += 1
      if inline: self._executing.acquire()
    if inline: self._execute_packets(packets)
    else: self._pending.put(command_buffer)

  def _run(self) -> None:
    while True:
      command_buffer = self._pending.get()
      self._executing.acquire()
      self._execute_packets(decode(command_buffer))  # decoded lazily: a malformed buffer fails in the try below

  def _execute_packets(self, packets: Iterable[Packet]) -> None:
    """Run one command buffer's packets holding the execution lock (released here); an error (a malformed buffer
    included) stops the queue, and waiters on this device's signals raise DeviceError."""
    try:
      if self.device.error is None:
        for packet in packets: self._execute(packet)
    except Exception as error:
      with self.device.changed:
        self.device.error = f"{self.device.name} queue stopped: {type(error).__name__}: {error}"
        self.device.changed.notify_all()
    finally:
      self._executing.release()
      with self._state: self._outstanding -= 1

  def _execute(self, packet: Packet) -> None:
    if packet.op is Op.EXEC:
      entry, kernargs, slices = packet.fields[:3]
      if entry not in self._entries: self._entries[entry] = KERNEL_ABI(entry)
      if slices <= 1: self._entries[entry](kernargs + 8)
      else: self._split(entry, kernargs, slices)
    elif packet.op is Op.SIGNAL:
      with self.device.changed:
        Signal.memory_at(packet.fields[0]).value = packet.fields[1]
        self.device.changed.notify_all()
    elif packet.op is Op.TIMESTAMP: Signal.memory_at(packet.fields[0]).timestamp_ns = time.perf_counter_ns()
    elif packet.op is Op.WAIT: self._wait(*packet.fields)

  def _split(self, entry: int, kernargs: int, slices: int) -> None:
    """Run the launch as `slices` launches over consecutive parts of its outermost range, on this thread and the device's workers."""
    values = Kernargs.values_at(kernargs)
    begin, end = values[-2:]
    bounds = [begin + (end - begin) * i // slices for i in range(slices + 1)]
    parts = [Kernargs(values[:-2] + [lo, hi]) for lo, hi in zip(bounds, bounds[1:]) if hi > lo]
    self.device.workers.run(entry, [part.address + 8 for part in parts])

  def _wait(self, address: int, value: int) -> None:
    timeout = getenv("PYTC_WAIT_TIMEOUT", 30.0)
    deadline, memory = time.perf_counter() + timeout, Signal.memory_at(address)
    while memory.value < value:
      if time.perf_counter() > deadline: raise SignalTimeout(f"WAIT on signal {address:#x} for {value} timed out after {timeout:g} s")
      time.sleep(0.0001)


class CPUDevice:
  """The host as an HCQ device: one compute queue and a timeline signal that counts finished submissions."""
  def __init__(self, name: str = "CPU"):
    self.name, self.error = name, None
    self.changed = threading.Condition()  # notified whenever the queue writes a signal or stops
    self.cores = os.cpu_count() or 1
    self.workers = Workers(self.cores - 1)
    self.compute = CPUQueue(self, "compute")
    self.timeline, self.timeline_value = Signal(0, owner=self), 0
    self._free_buffers: dict[int, list[CPUBuffer]] = {}

  def alloc(self, nbytes: int) -> CPUBuffer:
    """A buffer of `nbytes`, reusing a freed one of the same size (its pages are already mapped); list.pop is atomic, so
    threads allocating at once never take the same one."""
    try: return self._free_buffers[nbytes].pop()
    except (KeyError, IndexError): return CPUBuffer(nbytes)

  def wrap(self, address: int, nbytes: int, owner: object = None) -> CPUBuffer: return CPUBuffer.wrap(address, nbytes, owner)

  def free(self, buffer: CPUBuffer) -> None:
    if not buffer.borrowed: self._free_buffers.setdefault(buffer.nbytes, []).append(buffer)
  def new_signal(self, value: int = 0) -> Signal: return Signal(value, owner=self)
  def queue(self) -> HWQueue: return HWQueue()

  def next_timeline_value(self) -> int:
    self.timeline_value += 1
    return self.timeline_value

  def synchronize(self, timeout: float | None = None) -> None:
    self.timeline.wait(self.timeline_value, timeout)
    if self.error is not None: raise DeviceError(self.error)
