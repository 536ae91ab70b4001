"""Flags from the environment, counters and small shared utilities."""
import contextlib
import ctypes
import functools
import gzip
import hashlib
import importlib
import importlib.metadata
import math
import os
import pathlib
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Hashable, Iterator
from typing import Generic, TypeVar

from pytc import flags

T = TypeVar("T", int, float, str)
K, V = TypeVar("K", bound=Hashable), TypeVar("V")


def package_file(package: str, name: str) -> str:
  """The path of the file `name` that the build put into `package` (in a source checkout installed editable, the
  package's folders are the sources and the built files' folder: every one of them is searched)."""
  folders = importlib.import_module(package).__path__
  if (path := next((p for folder in folders if (p := os.path.join(folder, name)) and os.path.exists(p)), None)) is None:
    raise ImportError(f"{name} is not built (looked in {', '.join(folders)}): install pytc with `make` or `pip install .`")
  return path


def package_library(package: str, name: str) -> ctypes.CDLL:
  """Load the shared library `name` that the build put into `package` (see package_file)."""
  return ctypes.CDLL(package_file(package, name))


@functools.cache
def pytc_version() -> str:
  """pytc's installed version (what cached binaries, winners and exported graphs are keyed by); read once, it costs ~0.3 ms."""
  return importlib.metadata.version("pytc")


@functools.cache
def getenv(key: str, default: T = 0) -> T:  # type: ignore[assignment]
  """tinygrad's getenv (read once per key), for user code and the ContextVars it makes; pytc's own variables are flags."""
  return type(default)(os.environ.get(key, default))


def dump_folder(name: str) -> str:
  """Where the IR of pipeline stage `name` is written with PYTC_DUMP=dir (dir/name, created), or "" without it."""
  if not (dump := flags.DUMP.value): return ""
  os.makedirs(folder := os.path.join(dump, name), exist_ok=True)
  return folder


class GlobalCounters:
  """Process-wide counts, named as tinygrad names them."""
  kernel_count: int = 0
  global_ops: int = 0  # arithmetic the kernels run did (pytc.estimate)
  global_mem: int = 0  # bytes the kernels run read and wrote (each buffer of a kernel once) and copies copied
  time_sum_s: float = 0.0  # seconds the devices ran command graphs, summed at DEBUG>=2 (when pytc times them)
  schedules_built: int = 0  # graphs whose structure was new: the passes ran and the kernels compiled

  @staticmethod
  def reset() -> None:
    GlobalCounters.kernel_count, GlobalCounters.global_ops, GlobalCounters.global_mem = 0, 0, 0
    GlobalCounters.time_sum_s, GlobalCounters.schedules_built = 0.0, 0

  @staticmethod
  def add(counts: tuple[tuple[str, int], ...]) -> None:
    """Add (counter name, amount) pairs: a command graph's counts after it ran."""
    for name, amount in counts: setattr(GlobalCounters, name, getattr(GlobalCounters, name) + amount)


def prod(values) -> int: return math.prod(values)


class LRUCache(Generic[K, V]):
  """A dict that keeps the `capacity` entries used last (none with capacity 0) and drops the others, safe to share between
  threads. Dropped values are released after the lock is let go, so their destructors (a compiled program's) never run under it."""
  def __init__(self, capacity: int | flags.Flag):
    """`capacity` may be a flag: its value when an entry is added (read live)."""
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
      capacity = self.capacity.value if isinstance(self.capacity, flags.Flag) else self.capacity
      dropped = [self._entries.popitem(last=False) for _ in range(len(self._entries) - max(capacity, 0))]
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


# *** modes, timing and progress: the helpers tinygrad's model files and examples import ***

class ContextVar:
  """A mode read while graphs are built, set from the environment (`key`) or by `Context`."""
  _registry: dict[str, "ContextVar"] = {}

  def __init__(self, key: str, default: int) -> None:
    self.key, self._value = key, getenv(key, default)
    ContextVar._registry[key] = self

  @property
  def value(self) -> int: return self._value
  @value.setter
  def value(self, value: int) -> None: self._value = value
  def __bool__(self) -> bool: return bool(self.value)
  def __int__(self) -> int: return int(self.value)
  def __eq__(self, other: object) -> bool: return self.value == other
  def __hash__(self) -> int: return hash(self.key)
  def __lt__(self, other: int) -> bool: return self.value < other
  def __le__(self, other: int) -> bool: return self.value <= other
  def __gt__(self, other: int) -> bool: return self.value > other
  def __ge__(self, other: int) -> bool: return self.value >= other
  def __repr__(self) -> str: return f"{self.key}={self.value}"


class Frontend:
  """The user-facing classes that modules below them use without importing them: tensor.py registers Tensor here when it
  defines it (argument checks look for its instances, TRAINING sets its `training`)."""
  tensor: type | None = None


class TrainingVar(ContextVar):
  """TRAINING is `Tensor.training` (dropout, batch statistics; the TRAINING flag sets it at import), so either spelling sets
  both; before Tensor is defined, the flag holds the value it will start with."""
  def __init__(self) -> None:
    self.key = flags.TRAINING.name
    ContextVar._registry[self.key] = self
  @property
  def value(self) -> int: return int(flags.TRAINING.value if Frontend.tensor is None else Frontend.tensor.training)
  @value.setter
  def value(self, value: int) -> None:
    if Frontend.tensor is None: flags.TRAINING.set(int(value))
    else: Frontend.tensor.training = bool(value)


class FlagVar(ContextVar):
  """A mode pytc reads from its environment flag each time it is used (DEBUG, JIT): `Context` sets the variable."""
  def __init__(self, flag: flags.Flag) -> None:
    self.key, self.flag = flag.name, flag
    ContextVar._registry[flag.name] = self
  @property
  def value(self) -> int: return self.flag.value
  @value.setter
  def value(self, value: int) -> None: self.flag.set(int(value))


class DefaultDtypeVar(ContextVar):
  """DEFAULT_FLOAT and DEFAULT_INT are `dtypes.default_float` and `dtypes.default_int`: a dtype or its name (the
  environment's `DEFAULT_FLOAT=half` sets it at import)."""
  def __init__(self, flag: flags.Flag, attribute: str) -> None:
    self.key, self.attribute = flag.name, attribute
    ContextVar._registry[flag.name] = self
    if flag.name in os.environ: self.value = flag.value
  @property
  def value(self):
    from pytc.dtype import dtypes
    return getattr(dtypes, self.attribute)
  @value.setter
  def value(self, value) -> None:
    from pytc.dtype import dtypes, to_dtype
    dtype = to_dtype(value.lower() if isinstance(value, str) else value)
    if not (dtype.is_float if self.attribute == "default_float" else dtype.is_int):
      raise TypeError(f"{self.key} must be a {'float' if self.attribute == 'default_float' else 'integer'} dtype, got {dtype}")
    setattr(dtypes, self.attribute, dtype)


TRAINING, DEBUG, JIT = TrainingVar(), FlagVar(flags.DEBUG), FlagVar(flags.JIT)
DEFAULT_FLOAT, DEFAULT_INT = DefaultDtypeVar(flags.DEFAULT_FLOAT, "default_float"), DefaultDtypeVar(flags.DEFAULT_INT, "default_int")


class Context(contextlib.ContextDecorator):
  """`with Context(TRAINING=1):` or `@Context(JIT=0)`: modes (TRAINING, JIT, and the ContextVars made) set for a block or
  a call, restored after."""
  def __init__(self, **modes: int) -> None:
    if unknown := sorted(set(modes) - set(ContextVar._registry)):
      raise KeyError(f"Context knows the modes {sorted(ContextVar._registry)}, not {unknown}")
    self.modes, self.saved = modes, []
  def __enter__(self) -> "Context":
    self.saved.append({key: ContextVar._registry[key].value for key in self.modes})
    for key, value in self.modes.items(): ContextVar._registry[key].value = value
    return self
  def __exit__(self, *exc) -> None:
    for key, value in self.saved.pop().items(): ContextVar._registry[key].value = value


def colored(text: str, color: str | None, background: bool = False) -> str:
  """`text` in an ANSI terminal color (black, red, green, yellow, blue, magenta, cyan, white; None leaves it plain)."""
  if color is None: return text
  colors = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"]
  if color not in colors: raise ValueError(f"colored knows {colors}, not {color!r}")
  return f"\u001b[{10 * background + 60 * color.isupper() + 30 + colors.index(color.lower())}m{text}\u001b[0m"


class Timing(contextlib.ContextDecorator):
  """Prints `prefix` and the milliseconds the block took (and `on_exit(nanoseconds)`'s text) when it ends."""
  def __init__(self, prefix: str = "", on_exit=None, enabled: bool = True) -> None:
    self.prefix, self.on_exit, self.enabled = prefix, on_exit, enabled
  def __enter__(self) -> "Timing":
    self.start = time.perf_counter_ns()
    return self
  def __exit__(self, *exc) -> None:
    self.elapsed = time.perf_counter_ns() - self.start
    if self.enabled: print(f"{self.prefix}{self.elapsed * 1e-6:6.2f} ms" + (self.on_exit(self.elapsed) if self.on_exit else ""))


def get_child(obj: object, key: str) -> object:
  """What the dotted path `key` names inside `obj`: attributes, and list or dict entries ("layers.0.weight")."""
  for part in key.split("."):
    if isinstance(obj, dict): obj = obj[part]
    elif part.isdigit() and isinstance(obj, list | tuple): obj = obj[int(part)]
    else: obj = getattr(obj, part)
  return obj


class tqdm:
  """A progress bar on stderr over an iterable (or `total` steps counted with update()): count, rate, elapsed and left."""
  def __init__(self, iterable=None, desc: str = "", disable: bool = False, unit: str = "it", total: int | None = None) -> None:
    self.iterable, self.desc, self.disable, self.unit = iterable, desc, disable, unit
    self.total = len(iterable) if total is None and hasattr(iterable, "__len__") else total
    self.n, self.start, self.shown = 0, time.perf_counter(), 0.0
  def __iter__(self):
    for item in self.iterable:
      yield item
      self.update(1)
    self.close()
  def __enter__(self) -> "tqdm": return self
  def __exit__(self, *exc) -> None: self.close()
  def set_description(self, desc: str) -> None: self.desc = desc
  def update(self, n: int = 1, close: bool = False) -> None:
    self.n += n
    if self.disable or (time.perf_counter() - self.shown < 0.1 and self.n != self.total and not close): return
    self.shown = time.perf_counter()
    elapsed = self.shown - self.start
    rate = self.n / elapsed if elapsed else 0.0
    left = f"<{(self.total - self.n) / rate:.1f}s" if self.total and rate else ""
    count = f"{self.n}/{self.total}" if self.total else f"{self.n}"
    sys.stderr.write(f"\r{self.desc + ': ' if self.desc else ''}{count} [{elapsed:.1f}s{left}, {rate:.2f}{self.unit}/s]")
    sys.stderr.flush()
  def close(self) -> None:
    if not self.disable and self.n: sys.stderr.write("\n")
    self.disable = True


def trange(n: int, **kwargs) -> tqdm: return tqdm(range(n), **kwargs)


class FetchError(RuntimeError):
  """A file could not be downloaded, and no local copy was found."""


def cache_root() -> pathlib.Path:
  """The folder of pytc's disk caches: PYTC_CACHE_DIR, else pytc under XDG_CACHE_HOME, else ~/.cache/pytc."""
  return pathlib.Path(flags.CACHE_DIR.value or os.path.join(flags.XDG_CACHE_HOME.value or os.path.expanduser("~/.cache"), "pytc"))


def downloads_folder() -> pathlib.Path:
  """Where fetch keeps what it downloads: PYTC_CACHE_DIR/downloads, else ~/.cache/pytc/downloads (XDG_CACHE_HOME honoured)."""
  return cache_root() / "downloads"


def fetch(url: str, name: str | pathlib.Path | None = None, subdir: str | None = None, gunzip: bool = False,
          allow_caching: bool = True) -> pathlib.Path:
  """The local file for `url`: a path (starting with / or .) is itself; else the copy in downloads_folder() (under `subdir`,
  named `name` or after the URL), downloaded when missing (gunzipped with `gunzip`). Without a network, put the file
  there: the error names the URL and the path."""
  if url.startswith(("/", ".")): return pathlib.Path(url)
  if isinstance(name, pathlib.Path) or (name is not None and "/" in name): path = pathlib.Path(name)
  else:
    stem = name or hashlib.md5(url.encode()).hexdigest()
    path = downloads_folder() / (subdir or "") / (stem + (".gunzip" if gunzip and name is None else ""))
  if path.is_file() and allow_caching: return path
  import urllib.error
  import urllib.request
  path.parent.mkdir(parents=True, exist_ok=True)
  partial = pathlib.Path(tempfile.mkstemp(dir=path.parent)[1])
  try:
    with urllib.request.urlopen(urllib.request.Request(url, headers={"User-Agent": "pytc"}), timeout=10) as response:
      length = None if gunzip else int(response.headers.get("content-length", 0)) or None
      source = gzip.GzipFile(fileobj=response) if gunzip else response
      with partial.open("wb") as out, tqdm(desc=url, unit="B", total=length) as bar:
        while chunk := source.read(1 << 16): bar.update(out.write(chunk))
    partial.rename(path)
  except (urllib.error.URLError, OSError, EOFError) as error:
    raise FetchError(f"cannot download {url} ({getattr(error, 'reason', error)}): put a copy of it at {path}") from None
  finally: partial.unlink(missing_ok=True)
  return path
