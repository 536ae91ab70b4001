"""Timing shared by the CPU benchmarks: every implementation of a workload runs in one process, interleaved round by round;
in each round an implementation gets a short pause (thread pools another left spinning, like libgomp's after torch, go to
sleep), calls for a short while untimed (idle cores wake and clock up), then the mean of calls for as long again.
OpenBLAS's idle threads spin for ~0.1 s after each call by default, stealing the cores from whatever runs next;
OPENBLAS_THREAD_TIMEOUT=4 (set here unless given, before NumPy loads) makes them sleep at once."""
from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import numpy as np  # noqa: E402

SETTLE_S = 0.02  # seconds: the pause before each implementation's calls


def timed(fn: Callable) -> float:
  start = time.perf_counter()
  fn()
  return time.perf_counter() - start


def steady(fn: Callable, seconds: float = 0.01) -> float:
  """Seconds per call once the machine is busy again: calls for `seconds` untimed, then the mean of calls for `seconds`
  more (at least one)."""
  end = time.perf_counter() + seconds
  while time.perf_counter() < end: fn()
  calls, start = 0, time.perf_counter()
  while not calls or time.perf_counter() - start < seconds:
    fn()
    calls += 1
  return (time.perf_counter() - start) / calls


def interleaved(impls: dict[str, Callable], rounds: int, seconds: float = 0.01) -> dict[str, float]:
  """The median seconds per call of each implementation over `rounds` interleaved rounds."""
  times: dict[str, list[float]] = {name: [] for name in impls}
  for _ in range(rounds):
    for name, fn in impls.items():
      time.sleep(SETTLE_S)
      times[name].append(steady(fn, seconds))
  return {name: statistics.median(t) for name, t in times.items()}


def machine_limits() -> tuple[float, float]:
  """Copy bandwidth (bytes/s, read + write) and NumPy's sgemm rate (flop/s)."""
  src = np.ones(32 * 2**20, np.float32)
  dst = np.empty_like(src)
  copy = min(timed(lambda: np.copyto(dst, src)) for _ in range(5))
  a = np.ones((1024, 1024), np.float32)
  sgemm = min(timed(lambda: a @ a) for _ in range(5))
  return 2 * src.nbytes / copy, 2 * 1024**3 / sgemm


def torch_available() -> bool: return importlib.util.find_spec("torch") is not None


@contextlib.contextmanager
def cold_caches(prefix: str) -> Iterator[None]:
  """pytc's and torch.compile's caches in an empty folder for the run, removed after; entered before pytc and torch load,
  so first calls compile for real."""
  cache = tempfile.mkdtemp(prefix=prefix)
  os.environ["PYTC_CACHE_DIR"], os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(cache, "pytc"), os.path.join(cache, "torchinductor")
  try: yield
  finally: shutil.rmtree(cache, ignore_errors=True)


def peers() -> dict:
  """The machine's cores and torch's version and threads (None without torch), printed as one line and kept for the JSON."""
  found = {"cores": os.cpu_count(), "torch": None}
  if torch_available():
    import torch
    found["torch"] = {"version": torch.__version__, "threads": torch.get_num_threads()}
  peer = f"torch {found['torch']['version']} with {found['torch']['threads']} threads" if found["torch"] else "torch not installed"
  print(f"{found['cores']} cores, {peer}")
  return found


def pytc_first_call(fn: Callable) -> dict[str, float]:
  """pytc's first call of `fn` with no schedule built (schedule + compile + run), then again with only the disk cache warm (ms)."""
  from pytc import realize
  realize._schedules.clear()
  cold = timed(fn)
  realize._schedules.clear()
  return {"cold": cold * 1e3, "disk_cache": timed(fn) * 1e3}
