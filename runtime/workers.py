"""The CPU device's core threads: parallel.c, built with the package and loaded here. A split launch's slices
run on the calling thread and the pool's threads with no Python (and no GIL) between them; a pool thread
polls for the next launch for a while before it sleeps, so back-to-back launches need no wake-up."""
from __future__ import annotations

import ctypes

from pytc.helpers import package_library

_library = package_library("pytc.runtime", "libpytc_parallel.so")
_library.pytc_parallel_start.argtypes, _library.pytc_parallel_start.restype = [ctypes.c_int], ctypes.c_int
_library.pytc_parallel_run.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int]
_library.pytc_parallel_run.restype = None


class Workers:
  """`count` threads (shared by every device of the process) that, with the caller, run a launch's slices."""
  def __init__(self, count: int):
    if count > 0 and _library.pytc_parallel_start(count) < 0: raise OSError("could not start the CPU worker threads")

  def run(self, entry: int, arguments: list[int]) -> None:
    """Call the kernel at `entry` once per argument block address, the calls spread over the cores."""
    _library.pytc_parallel_run(entry, (ctypes.c_void_p * len(arguments))(*arguments), len(arguments))
