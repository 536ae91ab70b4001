"""Flags from the environment, counters and small shared utilities."""
import ctypes
import functools
import importlib
import importlib.metadata
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T", int, float, str)
K, V = TypeVar("K", bound=Hashable), TypeVar("V")


def package_library(package: str, name: str) -> ctypes.CDLL:
  """Load the shared library `name` that the build put into `package` (in a source checkout installed editable, the
  package's folders are the sources and the built files' folder: every one of them is searched)."""
  folders = importlib.import_module(package).__path__
  if (path := next((p for folder in folders if (p := os.path.join(folder, name)) and os.path.exists(p)), None)) is None:
    raise ImportError(f"{name} is not built (looked in {', '.join(folders)}): install pytc with `make` or `pip install .`")
  return ctypes.CDLL(path)


@functools.cache
def pytc_version() -> str:
  """pytc's installed version (what cached binaries, winners and exported graphs are keyed by); read once, it costs ~0.3 ms."""
  return importlib.metadata.version("pytc")


@functools.cache
def getenv(key: str, default: T = 0) -> T:  # type: ignore[assignment]
  return type(default)(os.environ.get(key, default))


DEBUG: int = getenv("DEBUG", 0)


def dump_folder(name: str) -> str:
  """Where the IR of pipeline stage `name` is written with PYTC_DUMP=dir (dir/name, created), or "" without it."""
  if not (dump := getenv("PYTC_DUMP", "")): return ""
  os.makedirs(folder := os.path.join(dump, name), exist_ok=True)
  return folder


class GlobalCounters:
  """Process-wide counts, named as tinygrad names them."""
  kernel_count: int = 0
  time_sum_s: float = 0.0  # seconds the devices ran command graphs, summed at DEBUG>=2 (when pytc times them)
  schedules_built: int = 0  # graphs whose structure was new: the passes ran and the kernels compiled

  @staticmethod
  def reset() -> None:
    GlobalCounters.kernel_count, GlobalCounters.time_sum_s, GlobalCounters.schedules_built = 0, 0.0, 0


def prod(values) -> int: return math.prod(values)


class LRUCache(Generic[K, V]):
  """A dict that keeps the `capacity` entries used last (none with capacity 0) and drops the others, safe to share between
  threads. Dropped values are released after the lock is let go, so their destructors (a compiled program's) never run under it."""
  def __init__(self, capacity: int):
    self.capacity, self._entries, self._lock = capacity, OrderedDict(), threading.Lock()

  def get(self, key: K, default: V | None = None) -> V | None:
    with self._lock:
      try: self._entries.move_to_end(key)
      except KeyError: return default
      return self._entries[key]

  def __setitem__(self, key: K, value: V) -> None:
    with self._lock:
      self._entries[key] = value
      self._entries.move_to_end(key)
      dropped = [self._entries.popitem(last=False) for _ in range(len(self._entries) - max(self.capacity, 0))]
    dropped.clear()

  def clear(self) -> None:
    with self._lock: dropped, self._entries = self._entries, OrderedDict()
    dropped.clear()

  def __len__(self) -> int: return len(self._entries)
  def __contains__(self, key: object) -> bool: return key in self._entries
  def __iter__(self) -> Iterator[K]:
    with self._lock: return iter(list(self._entries))
  def values(self) -> list[V]:
    with self._lock: return list(self._entries.values())
