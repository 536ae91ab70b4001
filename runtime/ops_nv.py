"""The NV device: NVIDIA GPUs through the CUDA driver API (runtime/cuda.py: libcuda loaded with ctypes, no CUDA
toolkit).

- Opening "NV" / "NV:<n>": cuInit, cuDeviceGet(n), the GPU's primary context (cuDevicePrimaryCtxRetain; made current
  with cuCtxSetCurrent in every thread that calls in), one non-blocking stream. The target is pytc's description of the
  chip (compute capability from cuDeviceGetAttribute), else of the newest older one it knows (an sm_86 runs sm_80 PTX);
  below sm_80 the device does not open. Without a driver library: RuntimeError("no NVIDIA driver (libcuda.so not found):
  ..."). Every failing driver call raises CUDAError (a RuntimeError) naming the call and the error.
- Memory: cuMemAlloc_v2 (a 0-byte buffer takes 1 byte: the driver refuses empty allocations). copyin, copyout and
  transfer run on the device's stream (cuMemcpy{HtoD,DtoH,DtoD}Async_v2) once the work queued before them finished, and
  return once they finished; both waits are bounded by PYTC_WAIT_TIMEOUT (SignalTimeout). Frees wait until the stream is
  idle (cuMemFree may synchronize the device, which would hang behind a stream that never finishes); so do
  cuModuleUnload and the reuse of signal memory.
- Programs: PTX text (utf-8, passed NUL-terminated) or a cubin (ELF), loaded with cuModuleLoadDataEx (the JIT's error
  log goes into the error), a CUfunction per kernel: its handle is the kernel's `entry`. Unloaded once the Program is
  collected.
- Launches: a kernel takes one u64 device pointer per buffer. Its LaunchArgs hold those values and the `void*[]`
  kernelParams pointing at them (`address`), with `grid` workgroups of `local` threads (1-D, from KernelInfo.sizes).
- Queue: command buffers keep pytc's host packet format (runtime/hcq.py). `submit` decodes one (a malformed buffer, or
  one naming a signal not made by this device, is refused whole) and issues its packets in order on the stream: EXEC ->
  cuLaunchKernel (grid 0: nothing), COPY -> cuMemcpyDtoDAsync_v2, SIGNAL -> cuStreamWriteValue64_v2, WAIT ->
  cuStreamWaitValue64_v2 (CU_STREAM_WAIT_VALUE_GEQ), TIMESTAMP -> cuEventRecord, BARRIER -> nothing (one stream runs in
  order).
- Signals: 16-byte slots (value, timestamp_ns) of pinned host memory from cuMemHostAlloc(PORTABLE | DEVICEMAP). Packets
  carry the host address; the executor hands the GPU the mapped device address (cuMemHostGetDevicePointer_v2).
- Timestamps are read when the host looks (at synchronize, or when `timestamp_ns` is read): a stamp's time is the
  previous stamp's plus cuEventElapsedTime between their events (the first: an event recorded when the device opened,
  dated with time.perf_counter_ns then). So stamps are in the host's perf_counter_ns timebase, and their differences are
  the GPU's (~0.5 us resolution).
- `synchronize(timeout)` waits for the timeline's last value: SignalTimeout past the timeout (a WAIT that never comes or
  a hanging kernel is reported, never waited on forever); DeviceError at once when the context faulted (a kernel's
  illegal address: every later call fails). `reset()` abandons a stream that does not finish (a new stream and timeline;
  what the old one may still touch is never freed) and refuses a faulted context, which only a new process recovers.
"""

from __future__ import annotations

import ctypes
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from ctypes import byref, c_float, c_int, c_uint64, c_void_p

import numpy as np

from pytc import flags
from pytc.runtime import cuda
from pytc.runtime.cuda import CUDA_SUCCESS, CUDAError
from pytc.runtime.device import Allocator, Binary, HCQDevice, Kernel, KernelInfo, LaunchArgs, Program
from pytc.runtime.hcq import DeviceError, Op, Packet, Signal, SignalTimeout, decode
from pytc.runtime.target import GPU_TARGETS, Target

SIGNAL_SLAB = 4096  # bytes of pinned host memory per cuMemHostAlloc, cut into 16-byte signals
SIGNAL_OPS = (Op.SIGNAL, Op.WAIT, Op.TIMESTAMP)
_THREAD = threading.local()  # the context current in this thread: cuCtxSetCurrent is per thread


def nv_target(major: int, minor: int) -> Target:
  """The target for compute capability major.minor: pytc's description of that chip, else of the newest older one it
  knows."""
  known = sorted((int(t.arch[3:]), t) for t in GPU_TARGETS.values() if t.name == "nvptx" and t.arch[3:].isdigit())
  if not (fitting := [t for number, t in known if number <= 10 * major + minor]):
    raise RuntimeError(
      f"NVIDIA compute capability {major}.{minor} (sm_{major}{minor}) is older than every target pytc compiles for "
      f"({', '.join(t.arch for _, t in known)})"
    )
  return fitting[-1]


class NVBuffer:
  """`nbytes` of device memory at the device address `address` (256-byte aligned)."""

  def __init__(self, address: int, nbytes: int):
    self.address, self.nbytes = address, nbytes


class NVAllocator(Allocator):
  """cuMemAlloc_v2 memory; copies go through the device's stream, in order with its queued work."""

  def __init__(self, device: NVDevice):
    self.device = device

  def alloc(self, nbytes: int) -> NVBuffer:
    """A buffer of `nbytes`; MemoryError when the GPU has no room, even once the frees waiting for the stream are
    done."""
    device = self.device
    device.collect()
    if (address := device.allocate(max(nbytes, 1))) is None:
      device.drain("an allocation that found the memory full")
      if (address := device.allocate(max(nbytes, 1))) is None:
        raise MemoryError(f"{device.name} has no room for {nbytes} more bytes")
    return NVBuffer(address, nbytes)

  def free(self, buffer: NVBuffer) -> None:
    self.device.defer(self.device.cu.cuMemFree_v2, buffer.address)

  def copyin(self, buffer: NVBuffer, data: memoryview) -> None:
    if len(data) != buffer.nbytes:
      raise ValueError(f"copyin of {len(data)} bytes into a {buffer.nbytes}-byte buffer")
    if buffer.nbytes:
      host = np.frombuffer(data, np.uint8)
      self.device.copy("copyin", self.device.cu.cuMemcpyHtoDAsync_v2, buffer.address, host.ctypes.data, buffer.nbytes)

  def copyout(self, destination: memoryview, buffer: NVBuffer) -> None:
    if len(destination) != buffer.nbytes:
      raise ValueError(f"copyout of a {buffer.nbytes}-byte buffer into {len(destination)} bytes")
    if buffer.nbytes:
      host = np.frombuffer(destination, np.uint8)
      self.device.copy("copyout", self.device.cu.cuMemcpyDtoHAsync_v2, host.ctypes.data, buffer.address, buffer.nbytes)

  def transfer(self, destination: NVBuffer, source: NVBuffer, nbytes: int) -> None:
    if nbytes > min(destination.nbytes, source.nbytes):
      raise ValueError(
        f"transfer of {nbytes} bytes from a {source.nbytes}-byte buffer into a {destination.nbytes}-byte one"
      )
    if nbytes:
      self.device.copy("transfer", self.device.cu.cuMemcpyDtoDAsync_v2, destination.address, source.address, nbytes)


class NVArgs(LaunchArgs):
  """One launch's kernelParams: a `void*` per buffer argument, each pointing at a u64 slot holding the buffer's device
  address."""

  def __init__(self, addresses: list[int], grid: int, local: int):
    self.values = (c_uint64 * max(len(addresses), 1))(*addresses)
    self.pointers = (c_void_p * max(len(addresses), 1))(
      *(ctypes.addressof(self.values) + 8 * i for i in range(len(addresses)))
    )
    self.address: int = ctypes.addressof(self.pointers)
    self.global_size, self.local_size = (grid, 1, 1), (local, 1, 1)

  def set(self, position: int, buffer: NVBuffer) -> None:
    self.values[position] = buffer.address


class NVKernel(Kernel):
  """A CUfunction taking one device pointer per buffer, launched as `grid` workgroups of `local` threads."""

  def __init__(self, info: KernelInfo, function: int):
    self.name, self.entry, self.buffers, self.grid, self.local = (
      info.name,
      function,
      info.buffers,
      info.sizes["grid"],
      info.sizes["local"],
    )

  def args(self, buffers: list[NVBuffer]) -> NVArgs:
    if len(buffers) != self.buffers:
      raise ValueError(f"kernel {self.name} takes {self.buffers} buffers, not {len(buffers)}")
    return NVArgs([b.address for b in buffers], self.grid, self.local)


def module_image(code: bytes) -> bytes:
  """What cuModuleLoadDataEx takes for a binary's code: a cubin as it is, PTX text NUL-terminated."""
  if code[:4] == b"\x7fELF":
    return code
  try:
    text = code.decode()
  except UnicodeDecodeError:
    raise ValueError("not a loadable NV binary: neither PTX text nor a cubin") from None
  if "\0" in text:
    raise ValueError("not a loadable NV binary: PTX text with a NUL byte in it")
  return code + b"\0"


class NVProgram(Program):
  """A CUDA module of the binary's kernels, unloaded (once the stream is idle) when the Program is garbage collected."""

  def __init__(self, device: NVDevice, binary: Binary):
    super().__init__(device, binary)
    image, module, log = module_image(binary.code), c_void_p(), ctypes.create_string_buffer(16384)
    options = (c_int * 2)(cuda.CU_JIT_ERROR_LOG_BUFFER, cuda.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
    device.enter()
    try:
      device.cu.cuModuleLoadDataEx(byref(module), image, 2, options, (c_void_p * 2)(ctypes.addressof(log), len(log)))
    except CUDAError as error:
      detail = log.value.decode(errors="replace").strip()
      raise CUDAError(
        f"{device.name} cannot load the kernels: {error}" + (f": {detail}" if detail else ""), error.call, error.code
      ) from None
    self.module: int = module.value
    weakref.finalize(self, device.defer, device.cu.cuModuleUnload, self.module).atexit = False
    for info in binary.kernels:
      function = c_void_p()
      try:
        device.cu.cuModuleGetFunction(byref(function), self.module, info.name.encode())
      except CUDAError as error:
        if error.code != cuda.CUDA_ERROR_NOT_FOUND:
          raise
        raise ValueError(f"the NV binary has no kernel {info.name}") from None
      self.kernels[info.name] = NVKernel(info, function.value)


class NVSignal(Signal):
  """A signal in the device's pinned signal memory, which the GPU writes through its mapped address. Its timestamp is
  read from the TIMESTAMP's event when looked at."""

  def __init__(self, device: NVDevice, value: int = 0):
    super().__init__(value, device, device.signal_slot())
    weakref.finalize(self, device.defer, device.free_slots.append, self.address).atexit = False

  @property
  def timestamp_ns(self) -> int:
    self.owner.resolve_timestamps()
    return super().timestamp_ns


class NVDevice(HCQDevice):
  """An NVIDIA GPU: its primary context, one stream executing pytc's command buffers, signals in mapped host memory. A
  faulted context fails every wait on its signals; reset() abandons a stream whose work does not finish."""

  def __init__(self, name: str = "NV"):
    self.cu = cu = cuda.driver()
    ordinal, device, major, minor, context = int(name.partition(":")[2] or 0), c_int(), c_int(), c_int(), c_void_p()
    try:
      cu.cuInit(0)
      cu.cuDeviceGet(byref(device), ordinal)
      cu.cuDeviceGetAttribute(byref(major), cuda.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device)
      cu.cuDeviceGetAttribute(byref(minor), cuda.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device)
      target = nv_target(major.value, minor.value)
      cu.cuDevicePrimaryCtxRetain(byref(context), device)
    except CUDAError as error:
      raise CUDAError(f"opening {name}: {error}", error.call, error.code) from None
    self.compute_capability, self.context = (major.value, minor.value), context.value
    self.lock = threading.RLock()  # the stream's issue order and the bookkeeping below
    self.deferred: deque[tuple[Callable, int]] = deque()  # (function, handle): run once the stream is idle
    self.free_slots: list[int] = []
    self.device_addresses: dict[int, int] = {}  # signal slot host address -> its mapped device address
    self.events: list[int] = []  # events free for the next TIMESTAMP
    self.stamps: deque[tuple[int, int]] = deque()  # (event, signal address) of TIMESTAMPs not read yet, in stream order
    self.abandoned: list[NVSignal] = []  # the timelines of streams reset() gave up on (they may still write them)
    self.enter()
    self.stream = self._new_stream()
    self.base_event = self._new_event()
    cu.cuEventRecord(self.base_event, self.stream)
    super().__init__(name, NVAllocator(self), target, "pytc.compilers.gpu:PTXCompiler", NVProgram)
    self.drain("opening the device")
    self.base_ns = time.perf_counter_ns()

  def enter(self) -> None:
    """Make the device's context current in the calling thread."""
    if getattr(_THREAD, "context", None) != self.context:
      self.cu.cuCtxSetCurrent(self.context)
      _THREAD.context = self.context

  def _new_stream(self) -> int:
    stream = c_void_p()
    self.cu.cuStreamCreate(byref(stream), cuda.CU_STREAM_NON_BLOCKING)
    return stream.value

  def _new_event(self) -> int:
    event = c_void_p()
    self.cu.cuEventCreate(byref(event), cuda.CU_EVENT_DEFAULT)
    return event.value

  def allocate(self, nbytes: int) -> int | None:
    """The device address of `nbytes` new bytes, None when the GPU is out of memory."""
    pointer = c_uint64()
    self.enter()
    try:
      self.cu.cuMemAlloc_v2(byref(pointer), nbytes)
    except CUDAError as error:
      if error.code == cuda.CUDA_ERROR_OUT_OF_MEMORY:
        return None
      raise
    return pointer.value

  def copy(self, what: str, function: Callable, destination: int, source: int, nbytes: int) -> None:
    """Run a cuMemcpy*Async_v2 on the stream after the work queued before it, and wait until it finished."""
    self.drain(what)
    function(destination, source, nbytes, self.stream)
    self.drain(what)

  def drain(self, what: str) -> None:
    """Wait until the stream ran everything queued (PYTC_WAIT_TIMEOUT at most: SignalTimeout naming `what` waited), then
    collect."""
    self.enter()
    timeout = flags.WAIT_TIMEOUT.value
    deadline, spins = time.perf_counter() + timeout, 0
    while self.cu.cuStreamQuery(self.stream) != CUDA_SUCCESS:
      if time.perf_counter() > deadline:
        raise SignalTimeout(
          f"{self.name}: {what} waited {timeout:g} s for the work queued before it (a WAIT whose signal never came, "
          "or a kernel still running)"
        )
      spins += 1
      time.sleep(0 if spins < 1000 else 0.0005)
    self.collect()

  def defer(self, function: Callable, handle: int) -> None:
    """Run `function(handle)` once the stream is idle (frees, unloads, signal reuse: the queued work may still use
    them)."""
    self.deferred.append((function, handle))

  def collect(self) -> None:
    """Read the TIMESTAMPs that ran; when the stream is idle, run what was deferred until then."""
    with self.lock:
      self.resolve_timestamps()
      if (count := len(self.deferred)) and self.cu.cuStreamQuery(self.stream) == CUDA_SUCCESS:
        for _ in range(count):
          function, handle = self.deferred.popleft()
          function(handle)

  def resolve_timestamps(self) -> None:
    """Write the timestamp of each TIMESTAMP whose event completed, in stream order."""
    with self.lock:
      self.enter()
      while self.stamps:
        event, address = self.stamps[0]
        if self.cu.cuEventQuery(event) != CUDA_SUCCESS:
          return
        elapsed = c_float()
        self.cu.cuEventElapsedTime(byref(elapsed), self.base_event, event)
        self.base_ns += round(elapsed.value * 1e6)
        Signal.memory_at(address).timestamp_ns = self.base_ns
        self.events.append(self.base_event)
        self.base_event = event
        self.stamps.popleft()

  def signal_slot(self) -> int:
    """The host address of 16 free bytes of mapped signal memory."""
    with self.lock:
      if not self.free_slots:
        self.collect()
      if not self.free_slots:
        host, mapped = c_void_p(), c_uint64()
        self.enter()
        self.cu.cuMemHostAlloc(byref(host), SIGNAL_SLAB, cuda.CU_MEMHOSTALLOC_PORTABLE | cuda.CU_MEMHOSTALLOC_DEVICEMAP)
        self.cu.cuMemHostGetDevicePointer_v2(byref(mapped), host, 0)
        for offset in range(SIGNAL_SLAB - 16, -1, -16):
          self.device_addresses[host.value + offset] = mapped.value + offset
          self.free_slots.append(host.value + offset)
      return self.free_slots.pop()

  def new_signal(self, value: int = 0) -> NVSignal:
    return NVSignal(self, value)

  def submit(self, command_buffer: bytes) -> None:
    """Issue a command buffer's packets on the stream. ValueError, with nothing issued, for a malformed buffer or a
    signal this device did not make; a failing driver call raises CUDAError naming the packet (what came before it stays
    issued, and the timeline signals after it are still issued, so that synchronize() returns)."""
    packets = list(decode(command_buffer))
    if stray := next((p for p in packets if p.op in SIGNAL_OPS and p.fields[0] not in self.device_addresses), None):
      raise ValueError(
        f"{stray.op.name} on the signal at {stray.fields[0]:#x}, which {self.name} did not make: use "
        "device.new_signal()"
      )
    self.admit()
    self.enter()
    with self.lock:
      for position, packet in enumerate(packets):
        try:
          self._issue(packet)
        except CUDAError as error:
          for later in packets[position + 1 :]:
            if later.op is Op.SIGNAL and later.fields[0] == self.timeline.address:
              try:
                self._issue(later)
              except CUDAError:
                break
          raise CUDAError(
            f"{self.name}: packet {position} ({packet.op.name}) of a command buffer: {error}", error.call, error.code
          ) from None

  def _issue(self, packet: Packet) -> None:
    op, fields, cu, stream = packet.op, packet.fields, self.cu, self.stream
    if op is Op.EXEC:
      entry, kernargs, gx, gy, gz, lx, ly, lz = fields
      if gx and gy and gz:
        cu.cuLaunchKernel(entry, gx, gy, gz, lx, ly, lz, 0, stream, kernargs, None)
    elif op is Op.SIGNAL:
      cu.cuStreamWriteValue64_v2(
        stream, self.device_addresses[fields[0]], fields[1], cuda.CU_STREAM_WRITE_VALUE_DEFAULT
      )
    elif op is Op.WAIT:
      cu.cuStreamWaitValue64_v2(stream, self.device_addresses[fields[0]], fields[1], cuda.CU_STREAM_WAIT_VALUE_GEQ)
    elif op is Op.TIMESTAMP:
      event = self.events.pop() if self.events else self._new_event()
      cu.cuEventRecord(event, stream)
      self.stamps.append((event, fields[0]))
    elif op is Op.COPY and fields[2]:
      cu.cuMemcpyDtoDAsync_v2(*fields, stream)

  def synchronize(self, timeout: float | None = None) -> None:
    """Wait until the stream ran everything submitted up to the timeline's last value (HCQDevice.synchronize: a faulted
    context is a DeviceError at once), then read its timestamps and run what waited for the stream."""
    super().synchronize(timeout)
    self.collect()

  def fault(self) -> str | None:
    """Why the stream can never finish (its context faulted), or None."""
    try:
      self.enter()
      self.cu.cuStreamQuery(self.stream)
    except CUDAError as error:
      return f"{self.name}: the CUDA context faulted ({error}); every later call fails: restart the process"
    return None

  def reset(self) -> str | None:
    """Give up on a stream that does not finish (say, after a SignalTimeout): later work goes to a new stream and
    timeline, and what the old stream may still touch (its timeline, buffers and modules freed since) is never freed.
    Returns what it cleared, None when the stream was idle. DeviceError for a faulted context: only a new process can
    use the GPU again."""
    if (fault := self.fault()) is not None:
      raise DeviceError(f"{self.name} cannot be reset: {fault}")
    return super().reset()

  def unfinished_work(self) -> str | None:
    self.enter()
    if self.cu.cuStreamQuery(self.stream) == CUDA_SUCCESS:
      return None
    return (
      f"{self.name}: abandoned a stream whose work did not finish "
      "(a WAIT whose signal never came, or a kernel still running)"
    )

  def restart_queues(self) -> None:
    """A new stream and timeline; the old stream is destroyed (released by the driver once its work completes) and its
    timeline kept, as it may still write it."""
    self.enter()
    with self.lock:
      self.cu.cuStreamDestroy_v2(self.stream)
      self.abandoned.append(self.timeline)
      self.deferred.clear()
      self.stamps.clear()
      self.stream = self._new_stream()
      self.timeline = self.new_signal(self.timeline_value)
