"""The CPU device: host memory, kernels compiled into shared libraries (pytc.compilers.cpu), and a compute queue whose
worker thread executes HCQ command buffers, so the host keeps running while kernels execute (a buffer that finds the
queue idle and waits on no signal runs at once on the submitting thread). A launch whose buffers pass PYTC_SPLIT_BYTES,
or whose steps (outputs times reduction steps) pass PYTC_SPLIT_WORK, is split into slices of its outermost parallel
range, run on all cores (the slice bounds are a CPU kernel's last two arguments)."""

from __future__ import annotations

import _ctypes
import contextlib
import ctypes
import mmap
import os
import queue
import struct
import tempfile
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import NoReturn

import numpy as np

from pytc import flags
from pytc.helpers import DEBUG
from pytc.runtime._immediate import ExecutionLock, Immediate
from pytc.runtime.device import Allocator, Binary, HCQDevice, Kernel, KernelInfo, LaunchArgs, Program
from pytc.runtime.hcq import PACKETS, DeviceError, Op, Packet, decode, named, show
from pytc.runtime.native import DONE, MALFORMED, QUEUE_RUN, SIGNALED, TIMED_OUT
from pytc.runtime.native import library as native
from pytc.runtime.target import host_cpu

SIGNAL_PACKET = PACKETS[Op.SIGNAL]
KERNEL_ABI = ctypes.CFUNCTYPE(None, ctypes.c_void_p)  # the packed `void(void **args)` entry of a kernel


def _msync() -> Callable[..., int] | None:
  try:
    msync = ctypes.CDLL(None, use_errno=True).msync
  except (OSError, AttributeError, TypeError):
    return None  # no C library to ask (not a POSIX system)
  msync.argtypes, msync.restype = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int], ctypes.c_int
  return msync


_MSYNC, MS_ASYNC = _msync(), 1


def mapped(address: int, nbytes: int) -> bool:
  """Whether every page of [address, address + nbytes) is mapped in this process: msync fails (ENOMEM) on a range with a
  hole. It cannot tell readable memory from a mapping that forbids access; True where the system cannot be asked."""
  if not 0 < address < address + max(nbytes, 1) <= 1 << 64:
    return False
  if _MSYNC is None or nbytes <= 0:
    return True
  start = address & ~(mmap.PAGESIZE - 1)
  return _MSYNC(start, address + nbytes - start, MS_ASYNC) == 0


def default_pool_bytes() -> int:
  """How many bytes of freed buffers a CPU device keeps for reuse unless PYTC_FREE_POOL_BYTES says: 1 GiB, or an eighth
  of the machine's memory when that is less."""
  try:
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
  except (ValueError, OSError, AttributeError):
    memory = 8 << 30
  return min(1 << 30, memory // 8)


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


class Kernargs(LaunchArgs):
  """The argument block of one launch: its argument count, then a `void*` per argument (what the kernel's packed entry
  takes), each pointing at a slot that holds the value. A kernel's last two arguments are the [begin, end) of its
  outermost parallel range; `global_size[0]` is how many slices of it run at once, on as many cores."""

  def __init__(self, values: list[int], slices: int = 1):
    self.count = n = len(values)
    self._memory = (ctypes.c_uint64 * (1 + 2 * n))(n)
    base = ctypes.addressof(self._memory)
    for i, value in enumerate(values):
      self._memory[1 + i], self._memory[1 + n + i] = base + 8 * (1 + n + i), value
    self.address: int = base
    self.global_size = (slices, 1, 1)

  def set(self, position: int, buffer: CPUBuffer) -> None:
    self._memory[1 + self.count + position] = buffer.address

  @staticmethod
  def values_at(address: int) -> list[int]:
    count = ctypes.c_uint64.from_address(address).value
    return list((ctypes.c_uint64 * count).from_address(address + 8 * (1 + count)))


def elf_problem(data: bytes) -> str | None:
  """Why `data` is not a whole 64-bit little-endian ELF file (a segment or the section table reaching past its end), or
  None."""
  if len(data) < 64 or data[:4] != b"\x7fELF" or data[4:6] != b"\x02\x01":
    return "not a 64-bit little-endian ELF file"
  phoff, shoff = struct.unpack_from("<QQ", data, 0x20)
  phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", data, 0x36)
  if phentsize < 56 or phoff + phnum * phentsize > len(data):
    return "program headers past the end"
  if shnum and shoff + shnum * shentsize > len(data):
    return "section headers past the end"
  for header in range(phoff, phoff + phnum * phentsize, phentsize):
    offset, filesz = struct.unpack_from("<Q", data, header + 0x08)[0], struct.unpack_from("<Q", data, header + 0x20)[0]
    if offset + filesz > len(data):
      return "a segment past the end"
  return None


def load_library(code: bytes) -> tuple[ctypes.CDLL, int | None]:
  """dlopen a shared library given as bytes, through a private copy: a new file only this user can write, under a name
  no other library had (the loader would take a library of the same name for the one it already has), removed once
  loaded. Returns the library and its handle for dlclose (None where the system has no dlopen)."""
  if (problem := elf_problem(code)) is not None:
    raise ValueError(f"not a loadable CPU binary: {problem}")
  descriptor, path = tempfile.mkstemp(prefix="pytc-", suffix=".so")
  try:
    with open(descriptor, "wb") as file:
      file.write(code)
    handle = _ctypes.dlopen(path, ctypes.DEFAULT_MODE) if hasattr(_ctypes, "dlopen") else None
    return ctypes.CDLL(path, handle=handle), handle
  finally:
    os.unlink(path)


class CPUKernel(Kernel):
  """A kernel's packed entry `void(void **args)`: its buffers, then the [begin, end) of its outermost parallel range."""

  def __init__(self, device: CPUDevice, info: KernelInfo, entry: int):
    self.device, self.name, self.entry, self.extent = device, info.name, entry, info.sizes["extent"]
    # chosen by a kernel search; else by the bytes it touches and the steps it takes
    self.cores = info.sizes.get("cores")
    self.work = info.sizes.get("work", 0)

  def args(self, buffers: list[CPUBuffer]) -> Kernargs:
    """Arguments over the whole range, split across the cores its search chose, else across all cores once the buffers
    pass PYTC_SPLIT_BYTES (default 256 KiB) or its steps PYTC_SPLIT_WORK (default 128K, as long as the default bytes
    take to stream: a 64x64 matmul's 262K multiply-adds take ~9 us on one core, 2/3 of that on two)."""
    big = sum(b.nbytes for b in buffers) >= flags.SPLIT_BYTES.value or self.work >= flags.SPLIT_WORK.value
    cores = self.cores if self.cores is not None else self.device.cores if big else 1
    slices = max(1, min(cores, self.device.cores, self.extent))
    return Kernargs([b.address for b in buffers] + [0, self.extent], slices)


class CPUProgram(Program):
  """A shared library of kernels (pytc.compilers.cpu builds it), unmapped (dlclose) once the Program is garbage
  collected: its kernels run only through a live Program (a realize holds it until its launches finished, a TinyJit
  capture while it can replay). At exit it stays mapped: the device's threads may still be in its code."""

  kernel: type[Kernel] = CPUKernel  # what launches each kernel: its argument layout

  def __init__(self, device: CPUDevice, binary: Binary):
    super().__init__(device, binary)
    self.library, handle = load_library(binary.code)
    if handle is not None:
      weakref.finalize(self, _ctypes.dlclose, handle).atexit = False
    for info in binary.kernels:
      try:
        entry = ctypes.cast(self.library[f"_mlir_{info.name}"], ctypes.c_void_p).value
      except AttributeError:
        raise ValueError(f"the CPU binary has no kernel {info.name}") from None
      self.kernels[info.name] = self.kernel(device, info, entry)


class CPUAllocator(Allocator):
  """Host memory, 64-byte aligned. Freed buffers are kept for reuse up to `pool_bytes` (PYTC_FREE_POOL_BYTES, default:
  see default_pool_bytes), those freed longest ago released first."""

  host_memory = True

  def __init__(self) -> None:
    self.pool_bytes: int = default_pool_bytes() if (pool := flags.FREE_POOL_BYTES.value) is None else pool
    self._free_buffers: dict[int, list[CPUBuffer]] = {}
    self._freed_order: OrderedDict[CPUBuffer, None] = OrderedDict()  # the pooled buffers, freed longest ago first
    self._pooled, self._pool_lock = 0, threading.RLock()  # re-entrant: a garbage collection inside may free a buffer

  def alloc(self, nbytes: int) -> CPUBuffer:
    """A buffer of `nbytes`, reusing a freed one of the same size (its pages are already mapped)."""
    with self._pool_lock:
      if pooled := self._free_buffers.get(nbytes):
        buffer = pooled.pop()
        del self._freed_order[buffer]
        self._pooled -= nbytes
        return buffer
    return CPUBuffer(nbytes)

  def wrap(self, address: int, nbytes: int, owner: object = None) -> CPUBuffer:
    """Host memory at `address` used in place; ValueError unless all of it is mapped (a wrong address would crash a
    kernel)."""
    if not mapped(address, nbytes):
      raise ValueError(f"the {nbytes} bytes at address {address:#x} are not all mapped in this process")
    return CPUBuffer.wrap(address, nbytes, owner)

  def free(self, buffer: CPUBuffer) -> None:
    """Keep `buffer` for reuse; beyond `pool_bytes` pooled, the buffers freed longest ago go back to the system (one
    larger than `pool_bytes` at once)."""
    if buffer.borrowed or buffer.nbytes > self.pool_bytes:
      return
    released: list[CPUBuffer] = []
    with self._pool_lock:
      if (same_size := self._free_buffers.get(buffer.nbytes)) is None:
        # forget the sizes with nothing pooled (amortized)
        if len(self._free_buffers) > 2 * len(self._freed_order) + 64:
          self._free_buffers = {nbytes: pooled for nbytes, pooled in self._free_buffers.items() if pooled}
        same_size = self._free_buffers[buffer.nbytes] = []
      same_size.append(buffer)
      self._freed_order[buffer] = None
      self._pooled += buffer.nbytes
      while self._pooled > self.pool_bytes and self._freed_order:
        released.append(oldest := self._freed_order.popitem(last=False)[0])
        self._free_buffers[oldest.nbytes].remove(oldest)
        self._pooled -= oldest.nbytes
    released.clear()  # their memory goes back here, outside the lock

  def pooled_bytes(self) -> int:
    return self._pooled

  def copyin(self, buffer: CPUBuffer, data: memoryview) -> None:
    if len(data) != buffer.nbytes:
      raise ValueError(f"copyin of {len(data)} bytes into a {buffer.nbytes}-byte buffer")
    buffer.as_memoryview()[:] = data

  def copyout(self, destination: memoryview, buffer: CPUBuffer) -> None:
    if len(destination) != buffer.nbytes:
      raise ValueError(f"copyout of a {buffer.nbytes}-byte buffer into {len(destination)} bytes")
    destination[:] = buffer.as_memoryview()

  def transfer(self, destination: CPUBuffer, source: CPUBuffer, nbytes: int) -> None:
    if nbytes > min(destination.nbytes, source.nbytes):
      raise ValueError(
        f"transfer of {nbytes} bytes from a {source.nbytes}-byte buffer into a {destination.nbytes}-byte one"
      )
    ctypes.memmove(destination.address, source.address, nbytes)


class CPUQueue:
  """Executes submitted command buffers in order, natively (runtime/packets.c), on one worker thread. A buffer submitted
  while the queue is idle, and that waits on no signal, runs at once on the submitting thread instead (still in order:
  nothing is queued or running), which saves the two thread hand-offs of a round trip through the worker."""

  def __init__(self, device: CPUDevice, name: str):
    self.device, self._pending = device, queue.SimpleQueue()
    # held while a buffer executes; its `outstanding` counts the buffers submitted and not finished (changed holding the
    # device's lifecycle_lock)
    self.execution = ExecutionLock()
    self._offset = ctypes.c_uint64()  # where the executing buffer is
    threading.Thread(target=self._run, name=f"{device.name}:{name}", daemon=True).start()

  def submit(self, command_buffer: bytes, scanned: tuple[bool, int] | None = None) -> None:
    """Queue a command buffer. A malformed one runs up to its last whole packet, then stops the queue like a failing
    packet. On a stopped queue this raises DeviceError (dropping the buffer) unless the error was raised to someone
    already, and resets the device either way (HCQDevice.admit). `scanned`: what scanning the buffer finds, when the
    caller knows it (whether it waits on a signal, the highest value it signals the timeline with)."""
    if DEBUG >= 5:
      show(self.device.name, "compute", named(whole_packets(command_buffer)))
    if type(command_buffer) is not bytes:
      command_buffer = bytes(command_buffer)
    waits, last = self.scan(command_buffer) if scanned is None else scanned
    execution = self.execution
    with self.device.lifecycle_lock:
      epoch = self.device.admit(last)
      inline = execution.outstanding == 0 and not waits
      execution.outstanding += 1
      if inline:
        execution.acquire()
    if inline:
      self._execute(epoch, command_buffer, waits)
    else:
      self._pending.put((epoch, command_buffer, waits))

  def immediate(self, command_buffer: bytes, brief: bool = False) -> Immediate:
    """A callable executing `command_buffer` (which waits on no signal) at once on the calling thread when nothing is
    queued or running and the queue is not stopped, returning whether it did: no submission, so no timeline value to
    account for. It runs in C (runtime/immediate.c): a call costs the device's `error`, the execution lock and the
    packets. A `brief` buffer runs holding the GIL."""
    shown = (lambda: show(self.device.name, "compute", named(whole_packets(command_buffer)))) if DEBUG >= 5 else None
    device = self.device
    return Immediate(
      bytes(command_buffer), QUEUE_RUN, self.execution, device, device.changed, self.stopped_immediately, shown, brief
    )

  def stopped_immediately(self, command_buffer: bytes, offset: int, status: int) -> NoReturn:
    """A packet of an immediate run failed: stop the queue as the worker would, and raise to the caller. The run began
    in the current epoch: a running device whose execution lock is held, with nothing outstanding, neither stops nor
    resets meanwhile."""
    epoch = self.device.epoch
    self._stopped(epoch, QueueStop.at(command_buffer, offset, status, 0.0))
    raise DeviceError(self.device.failure(epoch)) from None

  def scan(self, command_buffer: bytes) -> tuple[bool, int]:
    """Whether the buffer waits on a signal, and the highest value it signals the device's timeline with (0: none)."""
    last = ctypes.c_uint64()
    return bool(
      native.pytc_queue_scan(command_buffer, len(command_buffer), self.device.timeline.address, last)
    ), last.value

  def _run(self) -> None:
    while True:
      epoch, command_buffer, waits = self._pending.get()
      self.execution.acquire()
      self._execute(epoch, command_buffer, waits)

  def _execute(self, epoch: int, command_buffer: bytes, waits: bool) -> None:
    """Run one command buffer holding the execution lock (released here); dropped when the queue stopped, or was reset
    since the buffer was submitted. A failing packet, or malformed bytes after the whole ones, stops the queue."""
    try:
      if epoch == self.device.epoch and self.device.error is None:
        self._run_packets(self._arguments(command_buffer, int(flags.WAIT_TIMEOUT.value * 1e9) if waits else 0))
    except QueueStop as stop:
      self._stopped(epoch, stop)
    finally:
      self.execution.release()
      with self.device.lifecycle_lock:
        self.execution.outstanding -= 1

  def _stopped(self, epoch: int, stop: QueueStop) -> None:
    self.device.stop(epoch, f"{self.device.name} queue stopped at {stop.where} of a command buffer: {stop.error}")

  def _arguments(self, command_buffer: bytes, timeout_ns: int) -> tuple:
    """pytc_queue_run's arguments for `command_buffer` from its start, a WAIT timing out after `timeout_ns` (0: a buffer
    that waits on none)."""
    return command_buffer, ctypes.c_uint64(len(command_buffer)), ctypes.byref(self._offset), ctypes.c_int64(timeout_ns)

  def _run_packets(self, arguments: tuple) -> None:
    """Execute every packet (holding the execution lock), waking the host's waiters after each SIGNAL; QueueStop at one
    that fails (a WAIT after its timeout, PYTC_WAIT_TIMEOUT seconds)."""
    command_buffer, nbytes, _, timeout = arguments
    offset, changed = self._offset, self.device.changed
    offset.value = 0
    while (status := native.pytc_queue_run(*arguments)) == SIGNALED:
      if changed.waiting:
        changed.notify_waiters()
      if offset.value >= nbytes.value:
        return
    if status != DONE:
      raise QueueStop.at(command_buffer, offset.value, status, timeout.value * 1e-9)


class QueueStop(Exception):
  """Why the queue stopped, and at which packet (`where`)."""

  def __init__(self, where: str, error: str):
    super().__init__(error)
    self.where, self.error = where, error

  @classmethod
  def at(cls, command_buffer: bytes, offset: int, status: int, timeout: float) -> QueueStop:
    """The stop at the packet at byte `offset` (whole, unless the status says it is malformed), said as the packets'
    decoder says it."""
    index = len(whole_packets(command_buffer[:offset]))
    if status == MALFORMED:
      try:
        list(decode(command_buffer))
      except ValueError as error:
        return cls(f"packet {index} (malformed)", f"ValueError: {error}")
      return cls(f"packet {index} (malformed)", f"ValueError: a packet that is not whole at byte {offset}")
    packet = whole_packets(command_buffer[offset:])[0]
    if status == TIMED_OUT:
      signal, value = packet.fields
      return cls(
        f"packet {index} (WAIT)", f"SignalTimeout: WAIT on signal {signal:#x} for {value} timed out after {timeout:g} s"
      )
    return cls(f"packet {index} ({packet.op.name})", "MemoryError: no memory for the slices of a split launch")


def whole_packets(command_buffer: bytes) -> list[Packet]:
  """The packets of a command buffer up to the first that is not whole."""
  packets: list[Packet] = []
  with contextlib.suppress(ValueError):
    packets.extend(decode(command_buffer))
  return packets


class CPUDevice(HCQDevice):
  """The host as an HCQ device: one compute queue (a worker thread) and the timeline signal that counts finished
  submissions. A failing packet stops the queue (HCQDevice: waiters raise DeviceError naming the packet, the buffers
  queued behind are dropped); a submit to the stopped queue resets it by itself, after raising the error when no waiter
  has raised it yet."""

  polls_host_signals = True
  notifies_changed = True
  recovers_on_submit = True

  def __init__(self, name: str = "CPU"):
    super().__init__(name, CPUAllocator(), host_cpu(), "pytc.compilers.cpu:CPUCompiler", CPUProgram)
    self.cores = self.target.cores  # the cores this process may use (host_cpu)
    if self.cores > 1 and native.pytc_parallel_start(self.cores - 1) < 0:
      raise OSError("could not start the CPU worker threads")
    self.compute = CPUQueue(self, "compute")

  def submit(self, command_buffer: bytes) -> None:
    self.compute.submit(command_buffer)

  def immediate(self, command_buffer: bytes, brief: bool = False) -> Callable[[], bool]:
    return self.compute.immediate(command_buffer, brief)

  def timeline_submitter(self, command_buffer: bytes) -> Callable[[], None]:
    """As every device's, the signal packet written in place behind the buffer (no queue built on each call), and the
    queue told what a scan of the buffer finds (it signals the timeline only there)."""
    waits, own = self.compute.scan(command_buffer)
    if own:
      return super().timeline_submitter(command_buffer)  # it signals the timeline itself
    buffer = bytearray(command_buffer) + bytes(SIGNAL_PACKET.size)

    def submit() -> None:
      value = self.next_timeline_value()
      SIGNAL_PACKET.pack_into(buffer, len(command_buffer), Op.SIGNAL, SIGNAL_PACKET.size, self.timeline.address, value)
      self.compute.submit(bytes(buffer), (waits, value))

    return submit
