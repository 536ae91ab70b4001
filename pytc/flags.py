"""Every environment variable pytc reads, declared once: name, type, default and meaning (FLAGS; the README's table is
checked against it). A flag is read live: a change to os.environ shows at its next use, except for the four that give a
starting state at import, which a program then changes through that state (TRAINING: Tensor.training, PYTC_DEVICE:
Device.DEFAULT, DEFAULT_FLOAT and DEFAULT_INT: dtypes.default_float and default_int). An empty value counts as unset;
one that does not parse as the flag's type raises FlagError naming the variable. A default of None is worked out where
the flag is used (the meaning says how)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T", int, float, str)
KIND_NAMES = {int: "an integer", float: "a number", str: "a string"}


class FlagError(ValueError):
  """An environment variable pytc reads holds a value of the wrong type."""


@dataclass(eq=False)
class Flag(Generic[T]):
  name: str
  kind: type[T]
  default: T | None
  meaning: str
  _last: tuple[str | None, T | None] = field(default=(None, None), repr=False)  # the raw text last parsed and its value

  @property
  def value(self) -> T | None:
    """The variable's value now, or the default when it is unset or empty."""
    raw = os.environ.get(self.name)
    if raw is None or not raw.strip(): return self.default
    last = self._last
    if last[0] == raw: return last[1]
    try: value = self.kind(raw.strip())
    except ValueError: raise FlagError(f"{self.name} is {raw!r}, not {KIND_NAMES[self.kind]}") from None
    self._last = (raw, value)
    return value

  def set(self, value: T) -> None:
    """Set the variable for this process (what `Context` does for the modes it restores after)."""
    os.environ[self.name] = str(value)


DEBUG = Flag("DEBUG", int, 0, "1: each realize with its kernels and time; 2: each kernel's time; 3: schedules, fusion and "
             "vectorize decisions, command graphs; 4: kernel IR; 5: every command buffer, packet by packet")
JIT = Flag("JIT", int, 1, "0: TinyJit runs its function every call instead of replaying what it captured")
TRAINING = Flag("TRAINING", int, 0, "1: at import, Tensor.training (dropout, batch statistics, optimizer steps)")
DEFAULT_FLOAT = Flag("DEFAULT_FLOAT", str, "float32", "at import, the dtype of float tensors made without one (a float dtype's name)")
DEFAULT_INT = Flag("DEFAULT_INT", str, "int32", "at import, the dtype of integer tensors made without one (an integer dtype's name)")
DEVICE = Flag("PYTC_DEVICE", str, "CPU", "at import, the default device (CPU, EMU, AMD, AMD:MOCK, NV; `pytc devices` lists them)")
DUMP = Flag("PYTC_DUMP", str, "", "a folder: the IR after every pass of every pipeline is written under it")
CHECK_FORMS = Flag("PYTC_CHECK_FORMS", int, 0, "1: every pytc pass checks its input's form and MLIR verifies after every pass")
CACHE = Flag("PYTC_CACHE", int, 1, "0: no disk cache of compiled kernels")
CACHE_DIR = Flag("PYTC_CACHE_DIR", str, "", "the disk caches' folder (kernels, search winners, downloads); default pytc "
                 "in XDG_CACHE_HOME")
XDG_CACHE_HOME = Flag("XDG_CACHE_HOME", str, "", "the user's cache folder (freedesktop's); default ~/.cache")
CACHE_ENTRIES = Flag("PYTC_CACHE_ENTRIES", int, 4096, "compiled binaries the disk cache keeps, the ones used last")
SEARCH = Flag("PYTC_SEARCH", int, 0, "1: time each new CPU kernel's tile candidates when it is first compiled and keep the winner")
SEARCH_BUDGET = Flag("PYTC_SEARCH_BUDGET", float, 20.0, "seconds a kernel search may spend on one kernel")
COMPILE_THREADS = Flag("PYTC_COMPILE_THREADS", int, None, "threads LLVM compiles the CPU's kernels on; default the cores "
                       "this process may run on")
SCHEDULE_CACHE = Flag("PYTC_SCHEDULE_CACHE", int, 256, "schedules kept in memory, the ones used last")
TEMPLATE_CACHE = Flag("PYTC_TEMPLATE_CACHE", int, 4096, "recorded method graphs kept in memory")
GRADIENT_CACHE = Flag("PYTC_GRADIENT_CACHE", int, 256, "recorded gradient graphs kept in memory")
FUNCTION_CACHE = Flag("PYTC_FUNCTION_CACHE", int, 64, "recordings a pytc.function keeps, by its arguments' shapes")
STRUCTURE_CACHE = Flag("PYTC_STRUCTURE_CACHE", int, 1 << 20, "graph-node structure keys kept before the table starts afresh")
WAIT_TIMEOUT = Flag("PYTC_WAIT_TIMEOUT", float, 30.0, "seconds any wait on a device signal may take before it raises")
SPLIT_BYTES = Flag("PYTC_SPLIT_BYTES", int, 1 << 18, "a CPU launch whose buffers hold at least this many bytes runs on all cores")
SPLIT_WORK = Flag("PYTC_SPLIT_WORK", int, 1 << 17, "a CPU launch of at least this many steps (outputs times reduction steps) "
                  "runs on all cores")
FREE_POOL_BYTES = Flag("PYTC_FREE_POOL_BYTES", int, None, "bytes of freed buffers a CPU device keeps for reuse; default "
                       "1 GiB, or an eighth of the machine's memory when that is less")
AMD_MOCK = Flag("PYTC_AMD_MOCK", str, "isa", "what an AMD:MOCK dispatch runs on the gfx1100: 'isa' (the code object, on "
                "the RDNA3 emulator) or 'emulation' (the CPU build of the same mapped kernel)")
LIBCUDA = Flag("PYTC_LIBCUDA", str, "", "the path of the CUDA driver library; default libcuda.so.1, then libcuda.so")
DATASETS = Flag("PYTC_DATASETS", str, "", "a folder holding the datasets' files, read before any download")
CI = Flag("CI", str, "", "set by CI services: tinygrad's tests run through pytc's conformance shim skip their slow cases")

FLAGS: tuple[Flag, ...] = tuple(value for value in dict(globals()).values() if isinstance(value, Flag))
