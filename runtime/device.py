"""The device contract: what a backend provides, and all that realize and TinyJit use of it.

A backend is one module, `runtime/ops_<name>.py`, defining the class `<NAME>Device` (a `Compiled`), plus its support
code. A device has
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
  `synchronize`); `reset()` recovers a device whose queue stopped on an error.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pytc.runtime.hcq import HWQueue, Signal
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
  """A device: `name` ("CPU", "CPU:1"), its allocator, target, compiler (by `module:Class`) and program loader."""

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

  def queue(self) -> HWQueue:
    return HWQueue()

  def copy_queue(self) -> Any | None:
    return None

  def new_signal(self, value: int = 0) -> Signal:
    return Signal(value, owner=self)

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

  # A backend defines these: its queue's execution, the timeline, recovery.
  timeline: Signal

  def submit(self, command_buffer: bytes) -> None:
    raise NotImplementedError

  def next_timeline_value(self) -> int:
    raise NotImplementedError

  def synchronize(self, timeout: float | None = None) -> None:
    raise NotImplementedError

  def reset(self) -> str | None:
    raise NotImplementedError
