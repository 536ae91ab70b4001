"""The device contract: what a backend provides, and all that realize and TinyJit use of it.

A backend is one module, `runtime/ops_<name>.py`, defining the class `<NAME>Device` (a `Compiled`; an `HCQDevice` when
its queues execute HCQ command buffers, as every backend's do), plus its support code. A device has
- an allocator: device memory (alloc, free), host bytes in and out (copyin, copyout), copies between its buffers
  (transfer); whether its buffers are host memory (`host_memory`: the host and host queues read them at their address),
  host-visible staging memory its copy queue reaches (`staging`, `free_staging`), and whether that queue reaches another
  device's buffer (`reaches`: a GPU of the same driver, mapped for this one);
- a target (runtime/target.py) and a compiler for it, named `module:Class` and imported only when something is compiled,
  so a process that only runs binaries never loads the compiler;
- programs: `device.program(binary)` loads a `Binary` (code and each kernel's launch metadata); a kernel builds the
  arguments of one launch from buffers (`kernel.args(buffers)`: the kernel owns the argument layout and how the launch
  spreads over the device), and those arguments can be re-pointed at other buffers (`args.set(i, buffer)`) for a replay;
- HCQ queues: `device.queue()` builds one command buffer (exec, copy, signal, wait, timestamp, memory_barrier) that
  `queue.submit(device)` hands to the device; a device with a copy engine also has `copy_queue()` (copy, signal, wait,
  timestamp; `device.submit_copy`). `polls_host_signals`: its queue runs on the host, so it can wait on any device's
  signal;
- signals: `device.new_signal()`, and `device.timeline`, which counts finished submissions (`next_timeline_value`,
  `synchronize`); `reset()` recovers a device whose queue stopped on an error. HCQDevice implements these, with the
  waits, stops and resets behind them, the same for every backend.
"""

from __future__ import annotations

import functools
import importlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pytc import flags
from pytc.runtime.hcq import SUBMIT_LOCK, Changes, DeviceError, HWQueue, Signal, SignalTimeout
from pytc.runtime.target import Target


@dataclass(frozen=True)
class KernelInfo:
  """One kernel of a binary: its name (and entry symbol), how many buffers it takes, and the sizes its backend launches
  it with (the CPU's `extent`: the size of the outermost parallel range it splits across cores)."""

  name: str
  buffers: int
  sizes: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Binary:
  """Code compiled for one target (a shared library for the CPU) and the kernels in it. `target` is the target's
  `cache_key()`: a device loads only binaries built for its own."""

  target: str
  code: bytes
  kernels: tuple[KernelInfo, ...]


class Allocator:
  """Device memory. A buffer has `.nbytes` and `.address` (the device address kernels are given)."""

  host_memory = False

  def alloc(self, nbytes: int) -> Any:
    raise NotImplementedError

  def free(self, buffer: Any) -> None:
    raise NotImplementedError

  def copyin(self, buffer: Any, data: memoryview) -> None:
    raise NotImplementedError

  def copyout(self, destination: memoryview, buffer: Any) -> None:
    raise NotImplementedError

  def transfer(self, destination: Any, source: Any, nbytes: int) -> None:
    raise NotImplementedError

  def reaches(self, device: Compiled, buffer: Any) -> bool:
    return False

  def staging(self, nbytes: int) -> Any:
    raise NotImplementedError

  def free_staging(self, memory: Any) -> None:
    raise NotImplementedError


class LaunchArgs:
  """The arguments of one launch, in the kernel's layout: `address` is what an exec packet points the kernel at."""

  address: int
  global_size: tuple[int, int, int] = (1, 1, 1)
  local_size: tuple[int, int, int] = (1, 1, 1)

  def set(self, position: int, buffer: Any) -> None:
    """Point buffer argument `position` at another buffer of the same size (a replay on new inputs)."""
    raise NotImplementedError


class Kernel:
  """One kernel of a loaded program: `entry` is its device address."""

  name: str
  entry: int

  def args(self, buffers: list[Any]) -> LaunchArgs:
    raise NotImplementedError


class Program:
  """A binary loaded on a device; `kernels` by name. Its code stays loaded while the Program lives."""

  def __init__(self, device: Compiled, binary: Binary):
    self.device, self.binary = device, binary
    self.kernels: dict[str, Kernel] = {}


class Compiled:
  """A device: `name` ("CPU", "CPU:1"), its allocator, target, compiler (by `module:Class`) and program loader, and the
  queues, signals and timeline realize and TinyJit use (HCQDevice implements them for the HCQ backends)."""

  def __init__(self, name: str, allocator: Allocator, target: Target, compiler: str, program: type[Program]):
    self.name, self.allocator, self.target, self._compiler, self._program = name, allocator, target, compiler, program

  @functools.cached_property
  def compiler(self) -> Any:
    """The compiler for this device's target (imported on first use)."""
    module, _, cls = self._compiler.partition(":")
    return getattr(importlib.import_module(module), cls)(self.target)

  def program(self, binary: Binary) -> Program:
    """Load `binary`; ValueError when it was built for another target."""
    if binary.target != self.target.cache_key():
      raise ValueError(f"{self.name} runs code for {self.target}, not a binary built for {binary.target.split(' ')[0]}")
    return self._program(self, binary)

  polls_host_signals = False

  def copy_queue(self) -> Any | None:
    return None

  def timeline_submitter(self, command_buffer: bytes) -> Callable[[], None]:
    """A function that submits `command_buffer` followed by a signal of the timeline's next value, called under
    SUBMIT_LOCK (a command graph's last buffer for this device, submitted again on every run)."""
    return lambda: self.submit(command_buffer + self.queue().signal(self.timeline, self.next_timeline_value()).bytes())

  def immediate(self, command_buffer: bytes, brief: bool = False) -> Callable[[], bool] | None:
    """For a device that can: a function executing `command_buffer` (waiting on no signal) on the calling thread,
    finished on return, when its queue is idle, and saying whether it did (when not, the caller submits the buffer
    instead). A buffer run so takes no timeline value: the caller waits for nothing. `brief`: its work is so short that
    other Python threads need not run meanwhile."""
    return None

  # A backend defines these: its queue and signals, its queue's execution, the timeline, recovery.
  timeline: Signal

  def queue(self) -> Any:
    """A builder of one command buffer for the compute queue."""
    raise NotImplementedError

  def new_signal(self, value: int = 0) -> Signal:
    raise NotImplementedError

  def submit(self, command_buffer: bytes) -> None:
    raise NotImplementedError

  def next_timeline_value(self) -> int:
    raise NotImplementedError

  def synchronize(self, timeout: float | None = None) -> None:
    raise NotImplementedError

  def reset(self) -> str | None:
    raise NotImplementedError


class HCQDevice(Compiled):
  """A device whose queues execute HCQ command buffers, with the lifecycle every such backend shares, implemented here:

  - signals (`new_signal`) and the timeline (`timeline`), which counts finished submissions: a submission signals it
    with a value from `next_timeline_value`;
  - waits on the device's signals (`wait`, `synchronize`), bounded by a timeout (PYTC_WAIT_TIMEOUT seconds, default 30:
    SignalTimeout), and raising DeviceError once the device stopped;
  - stops: a failing packet or a fault stops the device (`stop`, with an error naming it): waiters on its signals raise
    DeviceError, and the buffers queued behind are dropped. A buffer runs in the epoch it was admitted in (`admit`);
    an epoch ends at a reset, and the buffers of an ended epoch are not run;
  - recovery: `reset()`. A submit to a stopped device raises its error until then, or with `recovers_on_submit`
    resets the device itself (raising the error first when no waiter has raised it yet).

  A backend implements its packets and its memory: `submit` (calling `admit` before it queues a buffer), `queue()`
  (host packets of runtime/hcq.py unless it encodes its hardware's) and `copy_queue()`, its allocator and programs,
  `new_signal` when its signals live in memory of its own; and, where its queues differ, `notifies_changed`,
  `recovers_on_submit`, `sleep`, `fault`, `unfinished_work` and `restart_queues`."""

  notifies_changed = False
  """Its queue notifies `changed` after every SIGNAL it executes (a queue on the host): a waiter sleeps on that
  condition instead of polling."""
  recovers_on_submit = False
  """A submit to the stopped device resets it (raising the error when no waiter has raised it yet); without, the submit
  raises the error until reset() is called."""

  timeline: Signal
  """Counts finished submissions: each signals it with a value from next_timeline_value()."""
  timeline_value: int
  """The last timeline value handed out."""
  epoch: int
  """How many times the device was reset."""
  error: str | None
  """Why the device stopped in this epoch; None while it runs."""
  changed: Changes
  """Notified on a stop and a reset, and by a queue on the host whenever it writes a signal."""
  lifecycle_lock: threading.RLock
  """Held while a buffer is admitted, the device stops or resets. Re-entrant: a backend may hold it around admit() and
  its own bookkeeping of the buffer admitted."""

  def __init__(self, name: str, allocator: Allocator, target: Target, compiler: str, program: type[Program]):
    """Called by a backend once new_signal() works (the timeline is made here)."""
    super().__init__(name, allocator, target, compiler, program)
    self.epoch, self.error, self.changed, self.lifecycle_lock = 0, None, Changes(), threading.RLock()
    # the timeline value reached when the device stopped, the highest value submitted, whether the stop was raised
    self._stopped_at, self._timeline_submitted, self._reported = 0, 0, False
    # epoch -> (the error that ended it, the timeline value reached by then)
    self._failures: dict[int, tuple[str, int]] = {}
    # per thread, epoch -> the last timeline value it submitted, until it synchronizes
    self._unsynchronized = threading.local()
    self.timeline, self.timeline_value = self.new_signal(), 0

  # ***** what a backend may replace *****

  def queue(self) -> HWQueue:
    return HWQueue()

  def new_signal(self, value: int = 0) -> Signal:
    """A signal in host memory; a backend whose queues cannot reach host memory puts its signals elsewhere."""
    return Signal(value, owner=self)

  def sleep(self, seconds: float) -> None:
    """Block until the device may have written a signal, for `seconds` at most (a wait calls it after polling a while):
    by default a short sleep; a GPU sleeps on its interrupt."""
    time.sleep(min(seconds, 0.0005))

  def fault(self) -> str | None:
    """An error the device's driver reports, after which its signals never advance (a faulted CUDA context), or None;
    waits ask while they poll."""
    return None

  def unfinished_work(self) -> str | None:
    """What reset() of a running device gives up (a GPU's work submitted and not finished, say behind a WAIT whose
    signal never comes), or None: by default reset() leaves a running device alone (a host queue cannot stop a
    packet)."""
    return None

  def restart_queues(self) -> None:
    """Give up what the queues hold and start afresh (a GPU's new queues); a reset calls it, holding lifecycle_lock. By
    default nothing: each buffer is dropped by its ended epoch."""

  # ***** the lifecycle *****

  def next_timeline_value(self) -> int:
    """The next timeline value to signal, taken holding SUBMIT_LOCK up to the submission that signals it (values are
    submitted in increasing order)."""
    self.timeline_value += 1
    return self.timeline_value

  def admit(self, timeline_value: int | None = None) -> int:
    """The epoch a command buffer the backend is about to queue runs in. `timeline_value`: the highest timeline value
    the buffer signals (0: none; None: not known, taken as the last value handed out). On a stopped device this raises
    the error (the buffer is dropped); with `recovers_on_submit` it resets the device first, and raises only when no
    waiter has raised the error yet."""
    value = self.timeline_value if timeline_value is None else timeline_value
    with self.lifecycle_lock:
      if (error := self.error) is not None:
        raises = not (self.recovers_on_submit and self._reported)
        if raises:  # the buffer is dropped: the timeline counts it finished at the reset
          self._timeline_submitted = max(self._timeline_submitted, value)
          self._unsynchronized.__dict__.pop(self.epoch, None)  # this thread is told below
        if self.recovers_on_submit:
          self._recover(error)
        if raises:
          raise DeviceError(error)
      if value:  # what synchronize() waits for: it checks that this thread's work was not dropped
        self._timeline_submitted = max(self._timeline_submitted, value)
        self._unsynchronized.__dict__[self.epoch] = value
      return self.epoch

  def stop(self, epoch: int, error: str) -> None:
    """Stop the device on `error` (a packet failed, the GPU faulted) when it still runs in `epoch`: waiters on its
    signals raise DeviceError(error) and the buffers queued behind are dropped, until a reset."""
    with self.changed:
      if self.error is None and self.epoch == epoch:
        self.error, self._stopped_at = error, self.timeline.value
      self.changed.notify_all()

  def stopped_since(self, epoch: int) -> bool:
    """Whether the device is stopped, or was reset after `epoch`."""
    return self.error is not None or self.epoch != epoch

  def failure(self, epoch: int, value: int = 0) -> str | None:
    """The error that stopped the device in `epoch` (stopped now, or reset since), or a fault its driver reports, or
    None. With `value`: None also when the timeline had reached `value` by then (that work finished). A returned error
    counts as raised, in the calling thread."""
    if epoch != self.epoch:
      error, reached = self._failures.get(epoch, (f"{self.name} queue stopped and was reset", -1))
    elif (error := self.error) is not None:
      reached = self._stopped_at
    else:
      error, reached = self.fault(), 0
    if error is None or 0 < value <= reached:
      return None
    self._reported = True
    # this thread is told: its next synchronize() does not raise it again
    self._unsynchronized.__dict__.pop(epoch, None)
    return error

  def wait(self, signal: Signal, value: int, timeout: float | None = None) -> None:
    """Block until `signal` (one of this device's) reaches `value`. SignalTimeout after `timeout` seconds (default
    PYTC_WAIT_TIMEOUT=30); DeviceError once the device stops, or was reset since the wait began (what was to signal it
    was dropped). A wait that polled a while sleeps on `changed` (notifies_changed), else in `sleep`."""
    timeout = flags.WAIT_TIMEOUT.value if timeout is None else timeout
    deadline, spins, epoch = time.perf_counter() + timeout, 0, self.epoch
    while signal.value < value:
      if (error := self.failure(epoch)) is not None:
        raise DeviceError(error)
      if time.perf_counter() > deadline:
        raise SignalTimeout.waiting(signal, value, timeout)
      if self.notifies_changed:
        with self.changed:
          self.changed.wait_for(lambda: signal.value >= value or self.stopped_since(epoch), timeout=0.001)
      else:
        spins += 1
        if spins < 1000:
          time.sleep(0)
        else:
          self.sleep(min(0.2, max(deadline - time.perf_counter(), 0.0)))

  def synchronize(self, timeout: float | None = None) -> None:
    """Wait until the device ran everything submitted. DeviceError when it stopped, or when a reset dropped work this
    thread submitted before this call."""
    submitted = self._unsynchronized.__dict__
    if (
      self.error is None
      and self.timeline.value >= self.timeline_value
      and (not submitted or (len(submitted) == 1 and self.epoch in submitted))
    ):
      return submitted.clear()  # all of it done, none dropped
    epochs = list(submitted.items())
    submitted.clear()
    self.timeline.wait(self.timeline_value, timeout)
    for epoch, value in epochs:
      if (epoch != self.epoch or self.error is not None) and (error := self.failure(epoch, value)) is not None:
        raise DeviceError(error)

  def reset(self) -> str | None:
    """Recover the device after a stop, or give up its `unfinished_work`: the queues drop what they hold, waiters from
    before raise DeviceError, and the timeline counts the dropped work as finished, so later submits run and
    synchronize() returns. Returns the error it cleared, None when the device was running (then nothing changes). A
    kernel already running is not stopped."""
    with SUBMIT_LOCK, self.lifecycle_lock:
      if (error := self.error or self.unfinished_work()) is not None:
        self._recover(error)
    self._unsynchronized.__dict__.clear()  # the caller was told
    return error

  def _recover(self, error: str) -> None:
    """End the epoch: its buffers are dropped and counted as finished, its waiters are told `error`."""
    reached = self._stopped_at if self.error is not None else self.timeline.value
    self.restart_queues()
    with self.changed:
      self._failures[self.epoch] = (error, reached)
      # a waiter from that long ago is told the queue stopped, without the reason
      self._failures.pop(self.epoch - 64, None)
      self.timeline.value = max(self.timeline.value, self._timeline_submitted)
      self.epoch, self.error, self._reported = self.epoch + 1, None, False
      self.changed.notify_all()
